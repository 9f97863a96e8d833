import type { ModelDescription } from '../../../src-shared/api/model-options';
import type { KnobErrorPayload } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { LatencyReport } from '../../core/engine/latency-recorder';
import type { RunAnalysis, RunOutputFiles } from '../../core/engine/run-outputs';
import type { SourceInfo } from '../../core/sources/frame-source';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';
import { headlineLines, notComputedLines } from '../headline-lines';

/**
 * The few lines `knob run` and `knob replay` print, or the same as one JSON object. A kept-class
 * run (knob run --keep) has its trace alone: no analysis, metrics.json or report.html.
 */
export interface RunSummary {
  files: RunOutputFiles | KeptRunFiles;
  settings: GateSettings;
  analysis: RunAnalysis | null;
  /** Set for a kept-class run: what it kept, and its labelled frames (no analysis counts them). */
  kept?: { keep: number; classCount: number; labelledFrames: number };
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

/** A kept-class run's files: its trace alone. */
export interface KeptRunFiles {
  trace: string;
  metrics: null;
  report: null;
}

function find(analysis: RunAnalysis | null, pick: (m: MetricValue) => boolean): number | null {
  return analysis?.metrics.fused.find(pick)?.value ?? null;
}

export function printRunSummary(json: boolean, summary: RunSummary): void {
  const { analysis, kept } = summary;
  const accuracy = find(analysis, (m) => m.identity.startsWith('accuracy'));
  const ece = find(analysis, (m) => m.name === 'ECE');
  const labelledFrames = analysis?.labelledFrameCount ?? kept?.labelledFrames ?? 0;
  if (json) {
    process.stdout.write(
      `${JSON.stringify({
        files: summary.files,
        frames: summary.frames,
        labelledFrames,
        kept: kept === undefined ? undefined : { keep: kept.keep, classCount: kept.classCount },
        settings: summary.settings,
        model: summary.model,
        source: summary.source,
        wallMs: summary.wallMs,
        framesPerSecond: summary.wallMs ? (summary.frames / summary.wallMs) * 1000 : undefined,
        latencyPerFrame: summary.latency,
        restarts: summary.restarts,
        error: summary.error ?? null,
        headline: analysis?.headline ?? null,
        fused: analysis?.metrics.fused ?? null,
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
  if (analysis !== null) lines.push(...notComputedLines(analysis.metrics.fused));
  if (analysis !== null && summary.intervals) lines.push(...headlineLines(analysis.headline));
  const total = summary.latency?.total;
  if (total)
    lines.push(
      `latency per frame (batch time / batch size): p50 ${total.p50Ms.toFixed(3)} ms, p95 ${total.p95Ms.toFixed(3)} ms, p99 ${total.p99Ms.toFixed(3)} ms`,
    );
  const { files } = summary;
  if (files.metrics === null)
    lines.push(
      `wrote ${files.trace}, keeping ${kept?.keep} of ${kept?.classCount} classes a frame: its metrics, each with its stated bound, are \`knob metrics --trace ${files.trace}\`'s (metrics.json and report.html need every class)`,
    );
  else lines.push(`wrote ${files.trace}, ${files.metrics}, ${files.report} (figures beside it)`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
