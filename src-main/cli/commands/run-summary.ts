import type { ModelDescription } from '../../../src-shared/api/model-options';
import type { KnobErrorPayload } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { LatencyReport } from '../../core/engine/latency-recorder';
import type { RunAnalysis, RunOutputFiles } from '../../core/engine/run-outputs';
import type { SourceInfo } from '../../core/sources/frame-source';
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

function find(analysis: RunAnalysis, identityStart: string): number | null {
  return analysis.metrics.fused.find((m) => m.identity.startsWith(identityStart))?.value ?? null;
}

export function printRunSummary(json: boolean, summary: RunSummary): void {
  const accuracy = find(summary.analysis, 'accuracy');
  const ece = summary.analysis.metrics.fused.find((m) => m.name === 'ECE')?.value ?? null;
  if (json) {
    process.stdout.write(
      `${JSON.stringify({
        files: summary.files,
        frames: summary.frames,
        labelledFrames: summary.analysis.labelledFrameCount,
        settings: summary.settings,
        model: summary.model,
        source: summary.source,
        wallMs: summary.wallMs,
        framesPerSecond: summary.wallMs ? (summary.frames / summary.wallMs) * 1000 : undefined,
        latencyPerFrame: summary.latency,
        restarts: summary.restarts,
        error: summary.error ?? null,
        headline: summary.analysis.headline,
        fused: summary.analysis.metrics.fused,
      })}\n`,
    );
    return;
  }
  const lines = [
    `${summary.frames} frames (${summary.analysis.labelledFrameCount} labelled)${summary.wallMs ? ` in ${(summary.wallMs / 1000).toFixed(2)} s, ${((summary.frames / summary.wallMs) * 1000).toFixed(0)} frames/s` : ''}`,
  ];
  if (accuracy !== null)
    lines.push(
      `fused accuracy ${(accuracy * 100).toFixed(2)} %, ECE ${ece?.toFixed(4)} (top-label, 15 equal-width bins)`,
    );
  lines.push(...notComputedLines(summary.analysis.metrics.fused));
  if (summary.intervals) lines.push(...headlineLines(summary.analysis.headline));
  const total = summary.latency?.total;
  if (total)
    lines.push(
      `latency per frame (batch time / batch size): p50 ${total.p50Ms.toFixed(3)} ms, p95 ${total.p95Ms.toFixed(3)} ms, p99 ${total.p99Ms.toFixed(3)} ms`,
    );
  lines.push(`wrote ${summary.files.trace}, ${summary.files.metrics}, ${summary.files.report} (figures beside it)`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
