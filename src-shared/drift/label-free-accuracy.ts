import {
  isotonicAt,
  isotonicAtAscending,
  poolAdjacentViolators,
  type IsotonicParams,
} from '../calibrators/isotonic-regression';
import { KnobError } from '../errors';
import { percentileIntervalContaining } from '../metrics/bootstrap';
import { seededRandom } from '../random';
import { BlockBootstrapStream, blockFramesFor } from './block-bootstrap';

/** A labelled reference, as the label-free estimators are fitted on it: top-1 confidence and correctness. */
export interface LabelledReference {
  confidence: Float64Array;
  /** 1 where the top-1 is the label, else 0. */
  correct: Uint8Array;
}

/** What the estimators keep of the reference. */
export interface AccuracyEstimators {
  referenceAccuracy: number;
  referenceMeanConfidence: number;
  /** ATC's threshold: the share of the reference below it is the reference's error rate. */
  atcThreshold: number;
  /** Isotonic map from confidence to the chance of being right, fitted on the reference. */
  calibration: IsotonicParams;
}

export const LABEL_FREE_METHODS = {
  'mean confidence': {
    identity: 'mean top-1 confidence (naive)',
    assumption: 'the model is calibrated on the new frames',
  },
  atc: {
    identity: 'ATC-MC (Garg et al., ICLR 2022): share of frames whose top-1 confidence reaches the reference threshold',
    assumption:
      'the shift changes how many frames clear the threshold, not how right the frames that clear it are (ATC-MC, maximum-confidence score)',
  },
  doc: {
    identity: 'DoC (Guillory et al., 2021): reference accuracy minus the fall in mean confidence',
    assumption: 'accuracy falls by as much as mean confidence does',
  },
  'calibrated confidence': {
    identity: 'mean of the confidence calibrated on the reference (isotonic; confidence-based estimation)',
    assumption: 'the reference calibration map still holds on the new frames (no concept shift)',
  },
} as const;
export type LabelFreeMethod = keyof typeof LABEL_FREE_METHODS;
export const LABEL_FREE_METHOD_NAMES = Object.keys(LABEL_FREE_METHODS) as LabelFreeMethod[];

/** Fewer labelled reference frames than this estimate nothing worth showing. */
export const MIN_LABELLED_REFERENCE = 100;

export function fitAccuracyEstimators(reference: LabelledReference): AccuracyEstimators {
  const n = reference.confidence.length;
  if (n < MIN_LABELLED_REFERENCE)
    throw new KnobError(
      'INVALID_INPUT',
      `label-free estimates need at least ${MIN_LABELLED_REFERENCE} labelled reference frames; the reference has ${n}`,
    );
  let correct = 0;
  let confidenceSum = 0;
  for (let i = 0; i < n; i++) {
    correct += reference.correct[i]!;
    confidenceSum += reference.confidence[i]!;
  }
  const sorted = Float64Array.from(reference.confidence).sort();
  // t with #(confidence < t) = errors: the (errors + 1)-th smallest (no frame counts when all are right)
  const errors = n - correct;
  const atcThreshold = errors >= n ? Infinity : sorted[errors]!;
  return {
    referenceAccuracy: correct / n,
    referenceMeanConfidence: confidenceSum / n,
    atcThreshold,
    calibration: poolAdjacentViolators(reference.confidence, reference.correct, ascendingOrder(reference.confidence))
      .params,
  };
}

/** Indices of `values` by ascending value (ties by index), or null when they already ascend. */
function ascendingOrder(values: Float64Array): number[] | null {
  let ascending = true;
  for (let i = 1; i < values.length && ascending; i++) ascending = values[i - 1]! <= values[i]!;
  if (ascending) return null;
  return Array.from({ length: values.length }, (_, i) => i).sort((a, b) => values[a]! - values[b]! || a - b);
}

/** Every method's accuracy estimate on the frames of `confidence` (a window's top-1 confidences). */
export function estimateAccuracy(
  estimators: AccuracyEstimators,
  confidence: Float64Array,
): Record<LabelFreeMethod, number> {
  const n = confidence.length;
  let sum = 0;
  let above = 0;
  let calibrated = 0;
  for (let i = 0; i < n; i++) {
    const c = confidence[i]!;
    sum += c;
    if (c >= estimators.atcThreshold) above++;
    calibrated += isotonicAt(estimators.calibration, c);
  }
  return estimatesFromSums(estimators, n, sum, above, calibrated);
}

/** The estimates from a window's sums: of the confidences, of those at the ATC threshold or above, of the calibrated ones. */
function estimatesFromSums(
  estimators: AccuracyEstimators,
  n: number,
  sum: number,
  above: number,
  calibrated: number,
): Record<LabelFreeMethod, number> {
  const mean = sum / n;
  return {
    'mean confidence': mean,
    atc: above / n,
    doc: Math.min(1, Math.max(0, estimators.referenceAccuracy - (estimators.referenceMeanConfidence - mean))),
    'calibrated confidence': calibrated / n,
  };
}

export interface AccuracyEstimate {
  method: LabelFreeMethod;
  value: number;
  /** Percentile interval of the moving-block bootstrap over the reference and the window together. */
  low: number;
  high: number;
}

export interface LabelFreeOptions {
  replicates: number;
  seed: number;
  level?: number;
}

/**
 * Each method's accuracy on each window of unlabelled frames, with an interval: the reference and
 * each window are resampled by the moving block bootstrap (block-bootstrap.ts: consecutive frames
 * of a stream are not independent, and an i.i.d. resample would make the intervals too narrow),
 * the estimators refitted on each resampled reference and applied to each resampled window. The
 * reference's replicates are drawn once and shared by the windows (an hour in one-minute windows
 * fits 200 references, not 200 a window). The interval is the bootstrap's percentile interval
 * widened to contain the estimate itself.
 */
export function labelFreeAccuracy(
  reference: LabelledReference,
  windows: readonly Float64Array[],
  options: LabelFreeOptions,
): AccuracyEstimate[][] {
  if (windows.some((w) => w.length === 0))
    throw new KnobError('INVALID_INPUT', 'a window of no frames has no accuracy to estimate');
  const estimators = fitAccuracyEstimators(reference);
  const random = seededRandom(options.seed);
  const n = reference.confidence.length;
  const referenceDraws = new BlockBootstrapStream(reference.confidence, blockFramesFor(reference.confidence), random);
  const resampled: LabelledReference = { confidence: new Float64Array(n), correct: new Uint8Array(n) };
  const replicateEstimators: AccuracyEstimators[] = [];
  // The estimators ignore the order of the frames, so each resample is laid out in the reference's
  // confidence order (each frame as often as it was drawn): their sorts then run on sorted input,
  // which the engines' merge-based sorts pass in linear time.
  const byConfidence = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => reference.confidence[a]! - reference.confidence[b]!,
  );
  const draws = new Uint32Array(n);
  for (let r = 0; r < options.replicates; r++) {
    draws.fill(0);
    for (let i = 0; i < n; i++) draws[referenceDraws.nextIndex()]!++;
    let j = 0;
    for (const at of byConfidence)
      for (let c = draws[at]!; c > 0; c--, j++) {
        resampled.confidence[j] = reference.confidence[at]!;
        resampled.correct[j] = reference.correct[at]!;
      }
    replicateEstimators.push(fitAccuracyEstimators(resampled));
  }
  return windows.map((window) => {
    const point = estimateAccuracy(estimators, window);
    const windowDraws = window.length >= 2 ? new BlockBootstrapStream(window, blockFramesFor(window), random) : null;
    const replicated = LABEL_FREE_METHOD_NAMES.map(() => new Float64Array(options.replicates));
    // Each replicate's calibration map at the window's own frames, by one walk along the map over
    // the frames in ascending order (instead of a search a drawn frame), then summed over the
    // frames drawn, in the order drawn: estimateAccuracy's sums of the resampled window exactly.
    const m = window.length;
    const order = ascendingOrder(window) ?? Array.from({ length: m }, (_, i) => i);
    const ascending = Float64Array.from(order, (i) => window[i]!);
    const calibratedAscending = new Float64Array(m);
    const calibratedAt = new Float64Array(m);
    replicateEstimators.forEach((replicate, r) => {
      isotonicAtAscending(replicate.calibration, ascending, calibratedAscending);
      for (let j = 0; j < m; j++) calibratedAt[order[j]!] = calibratedAscending[j]!;
      let sum = 0;
      let above = 0;
      let calibrated = 0;
      for (let i = 0; i < m; i++) {
        const at = windowDraws === null ? 0 : windowDraws.nextIndex();
        const c = window[at]!;
        sum += c;
        if (c >= replicate.atcThreshold) above++;
        calibrated += calibratedAt[at]!;
      }
      const estimate = estimatesFromSums(replicate, m, sum, above, calibrated);
      LABEL_FREE_METHOD_NAMES.forEach((method, k) => (replicated[k]![r] = estimate[method]));
    });
    return LABEL_FREE_METHOD_NAMES.map((method, m) => ({
      method,
      value: point[method],
      ...percentileIntervalContaining(replicated[m]!, point[method], options.level),
    }));
  });
}
