import { compileCalibrator, type CalibratorSpec } from '../../../src-shared/calibrators';
import { KnobError } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { headlineFigures, type HeadlineFigure } from '../../../src-shared/metrics/headline-intervals';
import { keptClassesText, withKeptClassBounds } from '../../../src-shared/metrics/kept-class-bounds';
import {
  EQUAL_WIDTH_15,
  EVERY_CLASS_MAX_CLASSES,
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
import { topLabelTraceScores, type KeptClassScoring } from '../../../src-shared/trace/top-label-trace-scores';

/**
 * Every figure of a run at a setting (run-outputs.ts writes them): the metrics of the fused output
 * and of each branch, with identities, the headline figures with intervals and the report's curves.
 * With a calibrator, every figure is of the calibrated output and says so. A kept-class trace
 * (kept-classes.ts) is scored from its kept classes, each metric carrying how far the full trace's
 * value can lie (withKeptClassBounds), the same figures `knob metrics --trace` gives it; so is a
 * trace of more than EVERY_CLASS_MAX_CLASSES classes without a calibrator, top-label only (the
 * classwise metrics marked not computed), as `knob metrics --trace` scores it.
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
  /** Set for a kept-class trace: what it keeps, and the fused output's frames whose top-1 it cannot settle. */
  kept: KeptRunAnalysis | null;
}

export interface KeptRunAnalysis {
  keep: number;
  classCount: number;
  /** "32 of 1000 classes kept a frame". */
  description: string;
  unsettledFrames: number;
  /** What the figures beside the metrics are (KEPT_FIGURES_NOTE). */
  figures: string;
}

/**
 * The headline intervals, the L2-CE intervals, TCE and the curves of a kept-class trace are of its
 * estimates: they carry no bound of their own (the metrics do), as knob metrics --intervals says.
 */
export const KEPT_FIGURES_NOTE =
  "the headline and L2-CE intervals, TCE and the curves are of the kept-class estimates: they resample or plot them, and each metric's stated bound adds to them";

/** TCE runs one exact test per distinct prediction: runs longer than this leave it out. */
export const TCE_RUN_LIMIT = 200_000;

/** One scored subject (the fused output or a branch) and what its metrics then need. */
interface ScoredSubject {
  scores: ClassScores;
  top: TopLabelScores;
  /** false: the scores are top-label only (a kept-class trace), the classwise metrics not computed. */
  everyClass: boolean;
  kept?: KeptClassScoring;
}

export function analyseRun(
  trace: Trace,
  settings: GateSettings,
  calibrator: CalibratorSpec | null = null,
): RunAnalysis {
  const keptClasses = trace.keptClasses;
  if (keptClasses !== undefined && calibrator !== null)
    throw new KnobError(
      'INVALID_INPUT',
      `the trace keeps ${keptClassesText({ keep: keptClasses.keep, classCount: trace.classCount })}: a calibrator needs every class`,
    );
  // With many classes and no calibrator, `knob metrics --trace`'s path: each frame fused and scored
  // on its own, so memory does not grow with K (the full vectors of an hour at 1,000 classes are
  // 864 MB a copy, and the three subjects' probabilities were held at once: 5.2 GB).
  const everyClass = keptClasses === undefined && (trace.classCount <= EVERY_CLASS_MAX_CLASSES || calibrator !== null);
  const output =
    keptClasses !== undefined
      ? replay(trace, settings, { logits: 'kept classes too' })
      : replay(trace, settings, {
          keepFusedLogits: everyClass,
          calibrator: calibrator === null ? null : compileCalibrator(calibrator),
        });
  const frames = labelledFrames(trace);
  const keptOf = (unsettledFrames: number): KeptRunAnalysis | null =>
    keptClasses === undefined
      ? null
      : {
          keep: keptClasses.keep,
          classCount: trace.classCount,
          description: keptClassesText({ keep: keptClasses.keep, classCount: trace.classCount }),
          unsettledFrames,
          figures: KEPT_FIGURES_NOTE,
        };
  if (frames.length === 0) {
    output.fusedLogits = null;
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
      kept: keptOf(0),
    };
  }
  // one subject at a time: a subject's n x K probabilities go before the next one's are made
  const scored = (subject: number): ScoredSubject => {
    if (everyClass) {
      const scores = scoresOfFrames(trace, [output.fusedLogits!, trace.zStatic, trace.zDyn][subject]!, frames);
      return { scores, top: topLabelScores(scores), everyClass: true };
    }
    // the fused output at its gate, then each branch (g = 0, g = 1): only the one scored is made
    const g = subject === 0 ? output.g : new Float64Array(trace.frameCount).fill(subject === 1 ? 0 : 1);
    return { ...topLabelTraceScores(trace, g, frames), everyClass: false };
  };
  const fused = scored(0);
  output.fusedLogits = null;
  const fusedTop = fused.top;
  const tooFew = frames.length <= TCE_DEFAULT_MIN_BIN_SIZE;
  const tce =
    !tooFew && frames.length <= TCE_RUN_LIMIT ? testBasedCalibrationError(fusedTop.confidence, fusedTop.correct) : null;
  const tceValue = tce !== null ? [tceMetric(tce)] : tooFew ? [tceNotEnoughFrames(frames.length)] : [];
  return {
    calibrator,
    output,
    labelledFrameCount: frames.length,
    metrics: {
      fused: subjectMetrics(fused, tceValue),
      static: subjectMetrics(scored(1)),
      dynamic: subjectMetrics(scored(2)),
    },
    headline: headlineFigures(fused.scores, fusedTop),
    reliability: reliabilityDiagram(fusedTop.confidence, fusedTop.correct, EQUAL_WIDTH_15),
    smooth: smoothReliabilityCurve(fusedTop.confidence, fusedTop.correct, { meshPoints: 51, replicates: 50 }),
    histogram: confidenceHistogram(fusedTop.confidence, 20),
    tce,
    l2CeIntervals: l2CeIntervalsWithBootstrap(fusedTop.confidence, fusedTop.correct, EQUAL_WIDTH_15),
    kept: keptOf(fused.kept?.bounds.unsettledFrames ?? 0),
  };
}

/** The suite and every preset of one subject (and `extra`), with their kept-class bounds where kept. */
function subjectMetrics({ scores, top, everyClass, kept }: ScoredSubject, extra: MetricValue[] = []): MetricValue[] {
  const suite = metricSuite(scores, { everyClass }, top);
  const metrics = [
    ...suite,
    ...PRESET_NAMES.flatMap((preset) => presetMetrics(preset, scores, top, everyClass, suite)),
    ...extra,
  ];
  return kept === undefined ? metrics : withKeptClassBounds(metrics, kept.bounds, kept);
}
