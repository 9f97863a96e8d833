import type { ModelDescription } from '../../../src-shared/api/model-options';
import type { KnobErrorPayload } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { LatencyReport } from '../../core/engine/latency-recorder';
import type { RunOutputFiles } from '../../core/engine/run-outputs';
import type { RunAnalysis } from '../../core/engine/run-analysis';
import type { SourceInfo } from '../../core/sources/frame-source';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';
import { headlineLines, notComputedLines } from '../headline-lines';

/** The few lines `knob run` and `knob replay` print, or the same as one JSON object. */
export interface RunSummary {
  files: RunOutputFiles;
  settings: GateSettings;
  analysis: RunAnalysis;
  frames: number;
  /** Print the headline figures with their intervals (JSON always has them). */
  intervals: boolean;
  model?: ModelDescription;
  source?: SourceInfo;
  wallMs?: number;
  latency?: LatencyReport;
  restarts?: number;
  error?: KnobErrorPayload | null;
}

function find(analysis: RunAnalysis, pick: (m: MetricValue) => boolean): number | null {
  return analysis.metrics.fused.find(pick)?.value ?? null;
}

export function printRunSummary(json: boolean, summary: RunSummary): void {
  const { analysis } = summary;
  const { kept } = analysis;
  const accuracy = find(analysis, (m) => m.identity.startsWith('accuracy'));
  const ece = find(analysis, (m) => m.name === 'ECE');
  const labelledFrames = analysis.labelledFrameCount;
  if (json) {
    process.stdout.write(
      `${JSON.stringify({
        files: summary.files,
        frames: summary.frames,
        labelledFrames,
        kept: kept ?? undefined,
        settings: summary.settings,
        model: summary.model,
        source: summary.source,
        wallMs: summary.wallMs,
        framesPerSecond: summary.wallMs ? (summary.frames / summary.wallMs) * 1000 : undefined,
        latencyPerFrame: summary.latency,
        restarts: summary.restarts,
        error: summary.error ?? null,
        headline: analysis.headline,
        fused: analysis.metrics.fused,
      })}\n`,
    );
    return;
  }
  const lines = [
    `${summary.frames} frames (${labelledFrames} labelled)${summary.wallMs ? ` in ${(summary.wallMs / 1000).toFixed(2)} s, ${((summary.frames / summary.wallMs) * 1000).toFixed(0)} frames/s` : ''}`,
  ];
  if (accuracy !== null)
    lines.push(
      `fused accuracy ${(accuracy * 100).toFixed(2)} %, ECE ${ece?.toFixed(4)} (top-label, 15 equal-width bins)`,
    );
  if (kept !== null)
    lines.push(
      `from ${kept.description}: metrics.json and the report say how far each figure of the full trace can lie; ${kept.unsettledFrames} frames' top-1 not settled by the kept classes`,
    );
  lines.push(...notComputedLines(analysis.metrics.fused));
  if (summary.intervals) lines.push(...headlineLines(analysis.headline));
  const total = summary.latency?.total;
  if (total)
    lines.push(
      `latency per frame (batch time / batch size): p50 ${total.p50Ms.toFixed(3)} ms, p95 ${total.p95Ms.toFixed(3)} ms, p99 ${total.p99Ms.toFixed(3)} ms`,
    );
  const { files } = summary;
  lines.push(`wrote ${files.trace}, ${files.metrics}, ${files.report} (figures beside it)`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
