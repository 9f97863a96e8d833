import { compileCalibrator, describeCalibrator, type CalibratorSpec } from '../../../src-shared/calibrators';
import { GATE_VARIANT_LABELS, type GateSettings } from '../../../src-shared/gate/gate-settings';
import { headlineFigures, type HeadlineFigure } from '../../../src-shared/metrics/headline-intervals';
import {
  EQUAL_WIDTH_15,
  metricSuite,
  PRESET_NAMES,
  presetMetrics,
  tceNotEnoughFrames,
} from '../../../src-shared/metrics/metric-suite';
import { l2CeIntervalsWithBootstrap } from '../../../src-shared/metrics/calibration-error-interval';
import {
  TCE_DEFAULT_MIN_BIN_SIZE,
  tceMetric,
  testBasedCalibrationError,
  type TceResult,
} from '../../../src-shared/metrics/test-based-calibration-error';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';
import {
  confidenceHistogram,
  reliabilityDiagram,
  smoothReliabilityCurve,
  type ReliabilityDiagram,
  type SmoothReliabilityCurve,
} from '../../../src-shared/metrics/reliability';
import { topLabelScores, type ClassScores, type TopLabelScores } from '../../../src-shared/metrics/scores';
import { replay, type ReplayOutput } from '../../../src-shared/trace/replay';
import type { Trace } from '../../../src-shared/trace/trace';
import { labelledFrames, scoresOfFrames } from '../../../src-shared/trace/trace-scores';
import { writeOutputFiles, type OutputFile } from '../files/output-files';
import { encodeTraceFile } from '../recording/trace-arrow';
import { reportFiles, type ReportInput } from '../report/html-report';
import { provenanceRows, sourceFramesOf, type Provenance, type StoredProvenance } from '../report/provenance';

import { creationTime } from '../report/creation-time';
/**
 * What `knob run`, `knob replay` and the desk's export leave in their output folder, from (trace,
 * settings, output calibrator, provenance) alone (with a calibrator, every figure is of the
 * calibrated output and says so): trace.arrow (the trace with the run's outputs and its provenance),
 * metrics.json (every metric of the fused output and of each branch, with identities, and the
 * headline figures with intervals), report.html with its figures beside it (SVG and PNG).
 */
export interface RunAnalysis {
  /** The output calibrator applied after fusion (null: the fused output as it is). */
  calibrator: CalibratorSpec | null;
  output: ReplayOutput;
  labelledFrameCount: number;
  metrics: { fused: MetricValue[]; static: MetricValue[]; dynamic: MetricValue[] };
  /** The fused output's headline figures with 95 % bootstrap intervals. */
  headline: HeadlineFigure[];
  reliability: ReliabilityDiagram | null;
  smooth: SmoothReliabilityCurve | null;
  histogram: { edges: Float64Array; counts: Float64Array } | null;
  /**
   * TCE of the fused output with its bins (null without labels, on TCE_DEFAULT_MIN_BIN_SIZE frames
   * or fewer, where metrics.fused names it not computed, or beyond TCE_RUN_LIMIT frames).
   */
  tce: TceResult | null;
  /** The fused output's debiased L2-CE (U-statistic) with its asymptotic and bootstrap intervals. */
  l2CeIntervals: ReturnType<typeof l2CeIntervalsWithBootstrap> | null;
}

/** TCE runs one exact test per distinct prediction: runs longer than this leave it out. */
export const TCE_RUN_LIMIT = 200_000;

export function analyseRun(
  trace: Trace,
  settings: GateSettings,
  calibrator: CalibratorSpec | null = null,
): RunAnalysis {
  const output = replay(trace, settings, {
    keepFusedLogits: true,
    calibrator: calibrator === null ? null : compileCalibrator(calibrator),
  });
  const frames = labelledFrames(trace);
  if (frames.length === 0) {
    return {
      calibrator,
      output,
      labelledFrameCount: 0,
      metrics: { fused: [], static: [], dynamic: [] },
      headline: [],
      reliability: null,
      smooth: null,
      histogram: null,
      tce: null,
      l2CeIntervals: null,
    };
  }
  const all = (scores: ClassScores, top: TopLabelScores = topLabelScores(scores)): MetricValue[] => [
    ...metricSuite(scores),
    ...PRESET_NAMES.flatMap((preset) => presetMetrics(preset, scores, top)),
  ];
  const fusedScores = scoresOfFrames(trace, output.fusedLogits!, frames);
  const fusedTop = topLabelScores(fusedScores);
  const tooFew = frames.length <= TCE_DEFAULT_MIN_BIN_SIZE;
  const tce =
    !tooFew && frames.length <= TCE_RUN_LIMIT ? testBasedCalibrationError(fusedTop.confidence, fusedTop.correct) : null;
  const tceValue = tce !== null ? [tceMetric(tce)] : tooFew ? [tceNotEnoughFrames(frames.length)] : [];
  return {
    calibrator,
    output,
    labelledFrameCount: frames.length,
    metrics: {
      fused: [...all(fusedScores, fusedTop), ...tceValue],
      static: all(scoresOfFrames(trace, trace.zStatic, frames)),
      dynamic: all(scoresOfFrames(trace, trace.zDyn, frames)),
    },
    headline: headlineFigures(fusedScores, fusedTop),
    reliability: reliabilityDiagram(fusedTop.confidence, fusedTop.correct, EQUAL_WIDTH_15),
    smooth: smoothReliabilityCurve(fusedTop.confidence, fusedTop.correct, { meshPoints: 51, replicates: 50 }),
    histogram: confidenceHistogram(fusedTop.confidence, 20),
    tce,
    l2CeIntervals: l2CeIntervalsWithBootstrap(fusedTop.confidence, fusedTop.correct, EQUAL_WIDTH_15),
  };
}

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
    provenance: Object.fromEntries(provenanceRows(provenance)),
    headline: analysis.headline,
    l2CeIntervals: analysis.l2CeIntervals,
    metrics: analysis.metrics,
  };
  const report: ReportInput = {
    title: `Knob run: ${GATE_VARIANT_LABELS[settings.variant]}, zeta ${settings.zeta}, wn ${settings.wnRadPerSec} rad/s${analysis.calibrator === null ? '' : `, calibrated by ${describeCalibrator(analysis.calibrator)}`}`,
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
  };
  return [
    {
      name: 'trace.arrow',
      data: encodeTraceFile(trace, { settings, output }, { provenance: source }),
    },
    {
      name: 'metrics.json',
      data: `${JSON.stringify(metricsJson, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v), 1)}\n`,
    },
    ...reportFiles(report),
  ];
}

/**
 * A kept-class run's output (knob run --keep): trace.arrow alone, with the run's settings, outputs
 * and provenance. metrics.json and report.html need every class (analyseRun); the kept-class
 * trace's metrics, each with its stated bound, are `knob metrics --trace`'s.
 */
export async function writeKeptRunTrace(
  outDir: string,
  trace: Trace,
  settings: GateSettings,
  output: ReplayOutput,
  provenance: StoredProvenance,
): Promise<string> {
  const data = encodeTraceFile(trace, { settings, output: { ...output, fusedLogits: null } }, { provenance });
  const [path] = await writeOutputFiles(outDir, [{ name: 'trace.arrow', data }]);
  return path!;
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
