import { stopIfCancelled, type CancelSignal } from '../cancel-signal';
import { z } from 'zod';
import { argmaxRow, type LogitArray } from '../fusion/logits';
import { binnedStatistics } from '../metrics/column-statistics';
import { resample } from '../metrics/bootstrap';
import { binningIdentity } from '../metrics/binning';
import { expectedCalibrationError } from '../metrics/calibration-error';
import {
  headlineStatistics,
  meanOverGroups,
  type HeadlineFigure,
  type HeadlineStatistic,
} from '../metrics/headline-intervals';
import { EQUAL_MASS_15, EQUAL_WIDTH_15 } from '../metrics/metric-suite';
import { reliabilityDiagram, type ReliabilityDiagram } from '../metrics/reliability';
import { scoresFromLogits, topLabelScores, type ClassScores, type TopLabelScores } from '../metrics/scores';
import { fixedBinResampler, type ResampleBuffers } from '../metrics/fixed-bin-resamples';
import { gridProviderFromSamples, smoothEceAtBandwidth, smoothEceBandwidth } from '../metrics/smooth-ece';
import { seededRandom } from '../random';
import type { FitReport } from './fit-report';
import {
  CALIBRATION_METHOD_LABELS,
  calibrateLogits,
  type RowConditions,
  type RowFeatures,
  fitCalibrator,
  type CalibrationMethod,
  type CalibratorSpec,
} from './output-calibrator';

/**
 * Calibrators compared on frames they were not fitted on. The split is the user's choice: a seeded
 * random split, a time-ordered one (fit on the first frames, evaluate on the rest: the honest
 * choice for a stream, whose later frames are not exchangeable with its earlier ones), k-fold
 * cross-fitting (every frame evaluated by a calibrator fitted on the other folds), or none (fit
 * and evaluate on everything, to compare with tools that do). Each method is evaluated on the same
 * frames, with bootstrap intervals; the spec it returns for applying is fitted on the fit frames
 * (k-fold: on all of them).
 */
/** The splits with one evaluation set (the tuner's too: src-shared/tuning). */
export const SINGLE_SPLIT_SCHEMAS = [
  z.strictObject({ kind: z.literal('none') }),
  z.strictObject({
    kind: z.literal('random'),
    evaluateFraction: z.number().gt(0).lt(1).default(0.3),
    seed: z.number().int().nonnegative().max(0xffffffff).default(0),
  }),
  z.strictObject({ kind: z.literal('time'), evaluateFraction: z.number().gt(0).lt(1).default(0.3) }),
] as const;

export const HeldOutSplitSchema = z.discriminatedUnion('kind', [
  ...SINGLE_SPLIT_SCHEMAS,
  z.strictObject({
    kind: z.literal('kfold'),
    folds: z.number().int().min(2).max(20).default(5),
    seed: z.number().int().nonnegative().max(0xffffffff).default(0),
  }),
]);
export type HeldOutSplit = z.output<typeof HeldOutSplitSchema>;

export function describeSplit(split: HeldOutSplit): string {
  switch (split.kind) {
    case 'none':
      return 'no held-out frames: fitted and evaluated on all labelled frames';
    case 'random':
      return `random split (seed ${split.seed}): evaluated on ${Math.round(split.evaluateFraction * 100)} % of the labelled frames, fitted on the rest`;
    case 'time':
      return `time-ordered split: fitted on the first ${Math.round((1 - split.evaluateFraction) * 100)} % of the labelled frames, evaluated on the last ${Math.round(split.evaluateFraction * 100)} %`;
    case 'kfold':
      return `${split.folds}-fold cross-fitting (seed ${split.seed}): every labelled frame evaluated by a calibrator fitted on the other folds`;
  }
}

export const SMOOTH_ECE_IDENTITY =
  'SmoothECE(top-label, reflected Gaussian kernel, bandwidth sigma* of the evaluated frames, relplot grid)';

/**
 * The ECE within each condition, averaged over the conditions present: a calibrator that leaves one
 * condition overconfident and another underconfident can show a small ECE over the mixture (the two
 * cancel within its bins); here each condition's frames are binned on their own. `conditions` are
 * the evaluated frames' condition codes (-1: none known, left out).
 */
function withinConditionsEce(top: TopLabelScores, conditions: Int32Array, conditionCount: number): HeadlineStatistic {
  return {
    name: 'ECE within conditions',
    identity: `ECE(top-label, ${binningIdentity(EQUAL_WIDTH_15)}, L1, within each of ${conditionCount} conditions, mean over conditions)`,
    lowerIsBetter: true,
    evaluate: (indices) => {
      const byCondition = new Map<number, number[]>();
      const n = indices === null ? conditions.length : indices.length;
      for (let i = 0; i < n; i++) {
        const row = indices === null ? i : indices[i];
        const condition = conditions[row];
        if (condition < 0) continue;
        let list = byCondition.get(condition);
        if (list === undefined) byCondition.set(condition, (list = []));
        list.push(row);
      }
      let sum = 0;
      for (const list of byCondition.values()) {
        const confidence = Float64Array.from(list, (row) => top.confidence[row]);
        const correct = Uint8Array.from(list, (row) => top.correct[row]);
        sum += expectedCalibrationError(binnedStatistics(confidence, correct, EQUAL_WIDTH_15));
      }
      return byCondition.size === 0 ? Number.NaN : sum / byCondition.size;
    },
  };
}

/**
 * The figures of a calibrator comparison as resample statistics: accuracy, NLL, Brier, ECE (15
 * equal-width), ECE (15 equal-mass), classwise ECE (15 equal-width per class, mean over classes)
 * and SmoothECE (at the bandwidth of all evaluated frames, kept fixed on resamples); where the
 * frames' conditions are known and at least two are present, the ECE within conditions too.
 */
export function evaluationStatistics(
  scores: ClassScores,
  top: TopLabelScores,
  conditions: RowConditions | null = null,
): HeadlineStatistic[] {
  const k = scores.classCount;
  const n = scores.sampleCount;
  // one set of buffers for every class's resamples (gathered: 13 n bytes, not 13 n K; counted outside
  // a bootstrap: 4 n); a bootstrap's replicate is counted once for all of them (draw-counts.ts)
  const countScratch: ResampleBuffers = { counts: null, gathered: null };
  const columns = Array.from({ length: k }, (_, c) => {
    const p = new Float64Array(n);
    const y = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      p[i] = scores.probabilities[i * k + c];
      y[i] = scores.labels[i] === c ? 1 : 0;
    }
    // each class's probabilities binned once; a resample counts its draws (fixed-bin-resamples.ts)
    return { p, y, resampler: fixedBinResampler(p, y, EQUAL_WIDTH_15, countScratch) };
  });
  const pick = <T extends Float64Array | Uint8Array>(values: T, indices: Uint32Array | null): T =>
    indices === null ? values : resample(values, indices);
  const sigma = smoothEceBandwidth(gridProviderFromSamples(top.confidence, top.correct));
  const present = conditions === null ? 0 : new Set(conditions.codes.filter((c) => c >= 0)).size;
  return [
    ...headlineStatistics(scores, top),
    {
      name: 'ECE (equal-mass)',
      identity: `ECE(top-label, ${binningIdentity(EQUAL_MASS_15)}, L1)`,
      lowerIsBetter: true,
      evaluate: (indices) =>
        expectedCalibrationError(
          binnedStatistics(pick(top.confidence, indices), pick(top.correct, indices), EQUAL_MASS_15),
        ),
    },
    {
      name: 'classwise ECE',
      identity: `ECE(classwise, ${binningIdentity(EQUAL_WIDTH_15)} per class, L1, mean over ${k} classes)`,
      lowerIsBetter: true,
      evaluate: (indices) =>
        columns.reduce(
          (sum, { p, y, resampler }) =>
            sum +
            expectedCalibrationError(
              indices === null ? binnedStatistics(p, y, EQUAL_WIDTH_15) : resampler.statistics(indices),
            ),
          0,
        ) / k,
    },
    {
      name: 'SmoothECE',
      identity: SMOOTH_ECE_IDENTITY,
      lowerIsBetter: true,
      evaluate: (indices) =>
        smoothEceAtBandwidth(gridProviderFromSamples(pick(top.confidence, indices), pick(top.correct, indices)), sigma),
    },
    ...(present >= 2 ? [withinConditionsEce(top, conditions!.codes, present)] : []),
  ];
}

export interface MethodEvaluation {
  method: CalibrationMethod;
  label: string;
  /** Fitted on the fit frames (k-fold: all labelled frames): what "apply" uses. */
  spec: CalibratorSpec;
  report: FitReport;
  figures: HeadlineFigure[];
  /** Its top-label reliability diagram on the evaluated frames (15 equal-width bins), for overlays. */
  reliability: ReliabilityDiagram;
  /** Share of evaluated frames whose top-1 class the calibrator changes. */
  top1Changed: number;
}

export interface CalibratorComparison {
  split: string;
  fitFrames: number;
  evaluatedFrames: number;
  /** The uncalibrated output on the evaluated frames. */
  before: HeadlineFigure[];
  /** The uncalibrated output's reliability diagram on the evaluated frames (the same bins as each method's). */
  beforeReliability: ReliabilityDiagram;
  methods: MethodEvaluation[];
}

/** Which labelled rows fit, and which are evaluated (in time order within each), or k folds. */
export function splitRows(
  n: number,
  split: HeldOutSplit,
): { fit: number[]; evaluate: number[] } | { folds: number[][] } {
  const all = Array.from({ length: n }, (_, i) => i);
  switch (split.kind) {
    case 'none':
      return { fit: all, evaluate: all };
    case 'time': {
      const cut = Math.round(n * (1 - split.evaluateFraction));
      return { fit: all.slice(0, cut), evaluate: all.slice(cut) };
    }
    case 'random':
    case 'kfold': {
      const random = seededRandom(split.seed);
      const order = all.slice();
      for (let i = n - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [order[i], order[j]] = [order[j], order[i]];
      }
      if (split.kind === 'random') {
        const held = Math.round(n * split.evaluateFraction);
        const byTime = (rows: number[]) => rows.sort((a, b) => a - b);
        return { fit: byTime(order.slice(held)), evaluate: byTime(order.slice(0, held)) };
      }
      return {
        folds: Array.from({ length: split.folds }, (_, f) =>
          order.filter((_, i) => i % split.folds === f).sort((a, b) => a - b),
        ),
      };
    }
  }
}

/** The picked rows' logits, labels, features and conditions (each where given). */
function rows(
  logits: LogitArray,
  labels: Int32Array,
  k: number,
  picked: number[],
  features: RowFeatures | null,
  conditions: RowConditions | null = null,
) {
  const z = new Float64Array(picked.length * k);
  const y = new Int32Array(picked.length);
  const width = features?.width ?? 0;
  const f = features === null ? null : { width, values: new Float32Array(picked.length * width) };
  const c =
    conditions === null
      ? null
      : {
          names: conditions.names,
          codes: new Int32Array(picked.length),
          hysteresisFrames: conditions.hysteresisFrames,
        };
  picked.forEach((row, i) => {
    for (let j = 0; j < k; j++) z[i * k + j] = logits[row * k + j];
    y[i] = labels[row];
    if (f !== null) f.values.set(features!.values.subarray(row * width, (row + 1) * width), i * width);
    if (c !== null) c.codes[i] = conditions!.codes[row];
  });
  return { z, y, f, c };
}

/** The headline figures of calibrated (or raw) logits on the evaluated frames, and their reliability diagram. */
function evaluationOf(
  logits: Float64Array,
  labels: Int32Array,
  k: number,
  conditions: RowConditions | null,
  options: { replicates?: number; seed?: number },
): { figures: HeadlineFigure[]; reliability: ReliabilityDiagram } {
  const scores = scoresFromLogits(logits, k, labels);
  const top = topLabelScores(scores);
  return {
    figures: meanOverGroups([evaluationStatistics(scores, top, conditions)], [labels.length], options),
    reliability: reliabilityDiagram(top.confidence, top.correct, EQUAL_WIDTH_15),
  };
}

/**
 * Each method fitted and evaluated under `split` on (logits, labels) of the labelled frames, in
 * time order; the same evaluated frames and the same resamples for every method.
 */
export function compareCalibrators(
  logits: LogitArray,
  labels: Int32Array,
  classCount: number,
  methods: readonly CalibrationMethod[],
  split: HeldOutSplit,
  options: {
    replicates?: number;
    seed?: number;
    features?: RowFeatures | null;
    /** The condition each row was recorded under, for the methods that need it (needsConditions). */
    conditions?: RowConditions | null;
    /** Before each method's fit: methods done, of how many, and the next one's label. */
    onProgress?: (done: number, total: number, stage: string) => void;
    /** Read between fits and by the fits that take seconds: a cancelled comparison stops within one. */
    signal?: CancelSignal;
    /**
     * false: the methods only, `before` empty and `beforeReliability` without bins (a share of a
     * comparison fitted on another thread, whose caller evaluates the uncalibrated output).
     */
    evaluateUncalibrated?: boolean;
  } = {},
): CalibratorComparison {
  const features = options.features ?? null;
  const conditions = options.conditions ?? null;
  const k = classCount;
  const parts = splitRows(labels.length, split);
  const evaluated = 'folds' in parts ? parts.folds.flat().sort((a, b) => a - b) : parts.evaluate;
  const held = rows(logits, labels, k, evaluated, features, conditions);
  const resampling = { replicates: options.replicates ?? 200, seed: options.seed ?? 0 };
  const { signal } = options;
  const results = methods.map((method, index): MethodEvaluation => {
    stopIfCancelled(signal, 'the calibrator comparison was cancelled');
    options.onProgress?.(index, methods.length, CALIBRATION_METHOD_LABELS[method]);
    let calibrated: Float64Array;
    let fitted: { spec: CalibratorSpec; report: FitReport };
    if ('folds' in parts) {
      // Cross-fitting: each fold calibrated by a fit on the other folds, then put back in order.
      const byRow = new Map<number, Float64Array>();
      for (const fold of parts.folds) {
        stopIfCancelled(signal, 'the calibrator comparison was cancelled');
        const others = parts.folds.filter((f) => f !== fold).flat();
        const train = rows(logits, labels, k, others, features, conditions);
        const test = rows(logits, labels, k, fold, features);
        const out = calibrateLogits(
          fitCalibrator(method, train.z, train.y, k, train.f, signal, train.c).spec,
          test.z,
          k,
          test.f,
        );
        fold.forEach((row, i) => byRow.set(row, out.subarray(i * k, (i + 1) * k)));
      }
      calibrated = new Float64Array(evaluated.length * k);
      evaluated.forEach((row, i) => calibrated.set(byRow.get(row)!, i * k));
      const all = rows(logits, labels, k, evaluated, features, conditions);
      fitted = fitCalibrator(method, all.z, all.y, k, all.f, signal, all.c);
    } else {
      const train = rows(logits, labels, k, parts.fit, features, conditions);
      fitted = fitCalibrator(method, train.z, train.y, k, train.f, signal, train.c);
      calibrated = calibrateLogits(fitted.spec, held.z, k, held.f);
    }
    let changed = 0;
    for (let i = 0; i < held.y.length; i++)
      if (argmaxRow(calibrated, i * k, k) !== argmaxRow(held.z, i * k, k)) changed++;
    return {
      method,
      label: CALIBRATION_METHOD_LABELS[method],
      spec: fitted.spec,
      report: fitted.report,
      ...evaluationOf(calibrated, held.y, k, held.c, resampling),
      top1Changed: held.y.length > 0 ? changed / held.y.length : 0,
    };
  });
  const uncalibrated =
    options.evaluateUncalibrated === false
      ? { figures: [], reliability: { identity: 'not evaluated on this thread', bins: [] } }
      : evaluationOf(held.z, held.y, k, held.c, resampling);
  return {
    split: describeSplit(split),
    fitFrames: 'folds' in parts ? labels.length : parts.fit.length,
    evaluatedFrames: evaluated.length,
    before: uncalibrated.figures,
    beforeReliability: uncalibrated.reliability,
    methods: results,
  };
}
