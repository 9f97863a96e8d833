import { describeCalibrator } from '../../../src-shared/calibrators';
import { GATE_VARIANT_LABELS, type GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import { DEFAULT_REPLICATES } from '../../../src-shared/drift/block-bootstrap';
import { calibrationTimeline, type CalibrationTimelineResult } from '../../../src-shared/drift/calibration-timeline';
import { writeOutputFiles, type OutputFile } from '../files/output-files';
import { traceFileChunks } from '../recording/trace-arrow';
import { reportFiles, type ReportInput } from '../report/html-report';
import { provenanceRows, sourceFramesOf, type Provenance, type StoredProvenance } from '../report/provenance';
import { creationTime } from '../report/creation-time';
import type { RunAnalysis } from './run-analysis';

/**
 * What `knob run`, `knob replay` and the desk's export leave in their output folder, from (trace,
 * settings, the run's analysis (run-analysis.ts), provenance) alone: trace.arrow (the trace with the
 * run's outputs and its provenance), metrics.json (every metric of the fused output and of each
 * branch, with identities, and the headline figures with intervals), report.html with its figures
 * beside it (SVG and PNG). A kept-class trace's files say what it keeps, and each metric its bound.
 */
export interface RunOutputFiles {
  trace: string;
  metrics: string;
  report: string;
}

/** Why a run's outputs cover fewer frames than the source has (a failure or a cancel part-way). */
export interface PartialRun {
  reason: string;
  framesProcessed: number;
  framesExpected: number | null;
}

/**
 * The outputs of a run, as files to write in one group. A partial run says so in metrics.json
 * (`partial`) and in a banner of the report.
 */
export function runOutputFiles(
  trace: Trace,
  settings: GateSettings,
  analysis: RunAnalysis,
  source: StoredProvenance,
  partial: PartialRun | null = null,
  createdAt: Date = creationTime(),
): OutputFile[] {
  const provenance: Provenance = {
    ...source,
    frames: trace.frameCount,
    labelledFrames: analysis.labelledFrameCount,
    sourceFrames: sourceFramesOf(trace),
    settings,
    calibrator: analysis.calibrator,
    createdAt: createdAt.toISOString(),
  };
  const output = { ...analysis.output, fusedLogits: null };
  const severity = trace.metadata.severity;
  const metricsJson = {
    settings,
    frameCount: trace.frameCount,
    labelledFrameCount: analysis.labelledFrameCount,
    clampedInputs: analysis.output.clampedInputs,
    calibrator: analysis.calibrator,
    partial,
    kept: analysis.kept,
    provenance: Object.fromEntries(provenanceRows(provenance)),
    headline: analysis.headline,
    l2CeIntervals: analysis.l2CeIntervals,
    metrics: analysis.metrics,
  };
  const report: ReportInput = {
    title: `Knob run: ${GATE_VARIANT_LABELS[settings.variant]}, zeta ${settings.zeta}, wn ${settings.wnRadPerSec} rad/s${analysis.calibrator === null ? '' : `, calibrated by ${describeCalibrator(analysis.calibrator)}`}${analysis.kept === null ? '' : ` (${analysis.kept.description}: each metric says how far the full trace's value can lie; ${analysis.kept.figures})`}`,
    partial:
      partial === null
        ? null
        : `Partial run: ${partial.framesProcessed}${partial.framesExpected === null ? '' : ` of ${partial.framesExpected}`} frames, stopped by: ${partial.reason}`,
    provenance,
    timestampsSeconds: trace.timestampsSeconds,
    g: analysis.output.g,
    uRef: trace.uRef,
    severity: severity?.kind === 'number' ? severity.values : null,
    reliability: analysis.reliability,
    smooth: analysis.smooth,
    histogram: analysis.histogram,
    tce: analysis.tce,
    l2CeIntervals: analysis.l2CeIntervals,
    headline: analysis.headline,
    metrics: analysis.metrics.fused,
    overTime: reportedOverTime(trace, settings),
  };
  return [
    {
      name: 'trace.arrow',
      data: traceFileChunks(trace, { settings, output }, { provenance: source }),
    },
    {
      name: 'metrics.json',
      data: `${JSON.stringify(metricsJson, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v), 1)}\n`,
    },
    ...reportFiles(report),
  ];
}

/**
 * The report's calibration over time (`knob timeline` at its defaults: windows of a minute), when
 * at least two windows have figures; the fused output's, before any output calibrator.
 */
function reportedOverTime(trace: Trace, settings: GateSettings): CalibrationTimelineResult | null {
  if (trace.labels === null) return null;
  const overTime = calibrationTimeline({
    trace,
    settings,
    windowFrames: null,
    strideFrames: null,
    replicates: DEFAULT_REPLICATES,
    seed: 0,
  });
  return overTime.windows.filter((w) => w.values.some((v) => v !== null)).length >= 2 ? overTime : null;
}

/** Writes a run's outputs into `outDir`, all or nothing. */
export async function writeRunOutputs(
  outDir: string,
  trace: Trace,
  settings: GateSettings,
  analysis: RunAnalysis,
  provenance: StoredProvenance,
  partial: PartialRun | null = null,
): Promise<RunOutputFiles> {
  const files = runOutputFiles(trace, settings, analysis, provenance, partial);
  const paths = await writeOutputFiles(outDir, files);
  const at = (name: string): string => paths[files.findIndex((f) => f.name === name)];
  return { trace: at('trace.arrow'), metrics: at('metrics.json'), report: at('report.html') };
}
