import { KnobError } from '../errors';
import { expNonPositive } from '../fusion/exp-non-positive';
import type { LogitArray } from '../fusion/logits';
import { sampleBrierOfRow } from './proper-scores';

/**
 * Validated classifier outputs for the metrics: probabilities (float64, row-major n x K), labels,
 * and the logits when the caller had them (NLL is then computed from logits, without clipping).
 *
 * Hostile input is refused with INVALID_INPUT naming the problem: empty input, fewer than two
 * classes, mismatched lengths, non-finite logits, probabilities outside [0, 1] or rows not summing
 * to 1 (tolerance 1e-6), labels outside 0..K-1. Confidences of exactly 0 or 1 are valid.
 */
export interface ClassScores {
  sampleCount: number;
  classCount: number;
  probabilities: Float64Array;
  labels: Int32Array;
  logits: LogitArray | null;
  /**
   * Each sample's NLL from its logits, log sum_k exp(z_ik) - z_iy (no clipping), when built from
   * logits: computed in the softmax pass, so nothing after it needs the logits.
   */
  sampleNll: Float64Array | null;
  /**
   * Each sample's Brier term sum_k (p_ik - 1[y_i = k])^2, computed where the probabilities are
   * made (softmax or validation pass) so the Brier score need not read them all again; null in
   * scores built by hand.
   */
  sampleBrier: Float64Array | null;
}

export interface TopLabelScores {
  /** max_k p_ik */
  confidence: Float64Array;
  /** argmax_k p_ik, lowest index on ties */
  predicted: Int32Array;
  /** 1 when predicted = label */
  correct: Uint8Array;
}

/** Top-label pairs for `n` frames, to be filled (scoreRowsInto, topLabelRowsInto, FusedScoreTable.scoresInto). */
/**
 * Scores of a top-label path (a trace of many classes, a fused-score table, kept classes): the
 * labels and per-sample NLL and Brier terms, no probabilities and no logits, so nothing that reads
 * every class takes them.
 */
export function topLabelOnlyScores(
  classCount: number,
  labels: Int32Array,
  sampleNll: Float64Array,
  sampleBrier: Float64Array,
): ClassScores {
  return {
    sampleCount: labels.length,
    classCount,
    probabilities: new Float64Array(0),
    labels,
    logits: null,
    sampleNll,
    sampleBrier,
  };
}

export function allocateTopLabelScores(n: number): TopLabelScores {
  return { confidence: new Float64Array(n), predicted: new Int32Array(n), correct: new Uint8Array(n) };
}

function fail(message: string): never {
  throw new KnobError('INVALID_INPUT', message);
}

function checkShape(valueCount: number, classCount: number, labels: ArrayLike<number>): number {
  if (!Number.isInteger(classCount) || classCount < 2)
    fail(`calibration needs at least two classes, got K = ${classCount}`);
  if (labels.length === 0) fail('no samples: the input is empty');
  if (valueCount !== labels.length * classCount) {
    fail(`${valueCount} scores do not match ${labels.length} labels x ${classCount} classes`);
  }
  return labels.length;
}

function checkedLabels(labels: ArrayLike<number>, classCount: number): Int32Array {
  const out = new Int32Array(labels.length);
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i];
    if (!Number.isInteger(label) || label < 0 || label >= classCount)
      fail(`label ${label} of sample ${i} is outside 0..${classCount - 1}`);
    out[i] = label;
  }
  return out;
}

export function scoresFromLogits(logits: LogitArray, classCount: number, labels: ArrayLike<number>): ClassScores {
  return scoredLogits(logits, classCount, labels).scores;
}

/**
 * The scores of logits with their top-label pairs (made in the same pass). `overwrite`: the
 * probabilities are written over the logits (which must be float64 and the caller's to lose), so a
 * knob turn of n x K scores allocates no second n x K buffer; the scores then keep no logits.
 */
export function scoredLogits(
  logits: LogitArray,
  classCount: number,
  labels: ArrayLike<number>,
  overwrite = false,
): { scores: ClassScores; top: TopLabelScores } {
  const checked = checkedShapeAndLabels(logits, classCount, labels);
  const n = checked.length;
  const inPlace = overwrite && logits instanceof Float64Array;
  const probabilities = inPlace ? logits : new Float64Array(n * classCount);
  const sampleNll = new Float64Array(n);
  const sampleBrier = new Float64Array(n);
  const top = allocateTopLabelScores(n);
  scoreRowsInto(logits, checked, classCount, 0, n, { probabilities, sampleNll, sampleBrier, top });
  return {
    scores: {
      sampleCount: n,
      classCount,
      probabilities,
      labels: checked,
      logits: inPlace ? null : logits,
      sampleNll,
      sampleBrier,
    },
    top,
  };
}

/** Validates the shape and the labels as scoresFromLogits does; returns the labels as Int32. */
export function checkedShapeAndLabels(logits: LogitArray, classCount: number, labels: ArrayLike<number>): Int32Array {
  checkShape(logits.length, classCount, labels);
  return checkedLabels(labels, classCount);
}

export function scoresFromProbabilities(
  probabilities: ArrayLike<number>,
  classCount: number,
  labels: ArrayLike<number>,
): ClassScores {
  const n = checkShape(probabilities.length, classCount, labels);
  const out = Float64Array.from(probabilities);
  const checked = checkedLabels(labels, classCount);
  const sampleBrier = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let k = 0; k < classCount; k++) {
      const p = out[i * classCount + k];
      if (!(p >= 0 && p <= 1)) fail(`probability ${k} of sample ${i} is outside [0, 1] (${p})`);
      sum += p;
    }
    if (Math.abs(sum - 1) > 1e-6) fail(`probabilities of sample ${i} sum to ${sum}, not 1`);
    sampleBrier[i] = sampleBrierOfRow(out, i * classCount, classCount, checked[i]);
  }
  return {
    sampleCount: n,
    classCount,
    probabilities: out,
    labels: checked,
    logits: null,
    sampleNll: null,
    sampleBrier,
  };
}

export function topLabelScores(scores: ClassScores): TopLabelScores {
  const n = scores.sampleCount;
  const top = allocateTopLabelScores(n);
  topLabelRowsInto(scores.probabilities, scores.labels, scores.classCount, 0, n, top);
  return top;
}

/** The top-label pairs of rows [from, to) into the caller's arrays (any thread's share). */
export function topLabelRowsInto(
  probabilities: Float64Array,
  labels: Int32Array,
  classCount: number,
  from: number,
  to: number,
  top: TopLabelScores,
): void {
  const k = classCount;
  for (let i = from; i < to; i++) {
    // argmaxRow written out: that helper also sees float32 logits elsewhere, and the polymorphic
    // call made this loop 3x slower
    const offset = i * k;
    let best = 0;
    let max = probabilities[offset];
    for (let c = 1; c < k; c++) {
      const p = probabilities[offset + c];
      if (p > max) {
        max = p;
        best = c;
      }
    }
    top.confidence[i] = max;
    top.predicted[i] = best;
    top.correct[i] = best === labels[i] ? 1 : 0;
  }
}

/**
 * Everything the metrics need from rows [from, to) of logits, in one pass per row (any thread's
 * share): the softmax (as fusion/logits.ts's softmaxRowInto, the same operations, so the same
 * bits), each sample's NLL and Brier term, and the top-label pairs (as topLabelRowsInto, from the
 * normalised probabilities, lowest index on ties). One pass instead of four: the row is still in
 * registers for each part, where separate passes re-read 80 MB each (1e6 x 10).
 *
 * A non-finite logit is refused with its sample and class: a row whose logits do not sum to a
 * finite number is scanned for the culprit (float32-range logits cannot overflow the sum).
 * `probabilities` null keeps none (a K-long scratch row instead, the same arithmetic): the
 * top-label pairs, NLL and Brier terms of a many-class output in memory that does not grow with K.
 * `probabilities` may be `logits` itself (each row is read before it is written).
 */
export function scoreRowsInto(
  logits: LogitArray,
  labels: Int32Array,
  classCount: number,
  from: number,
  to: number,
  out: {
    probabilities: Float64Array | null;
    sampleNll: Float64Array;
    sampleBrier: Float64Array;
    top: TopLabelScores;
  },
): void {
  const { sampleNll, sampleBrier } = out;
  const { confidence, predicted, correct } = out.top;
  const k = classCount;
  const keep = out.probabilities !== null;
  const probabilities = out.probabilities ?? new Float64Array(k);
  for (let i = from; i < to; i++) {
    const offset = keep ? i * k : 0;
    const rowAt = i * k;
    const label = labels[i];
    // read before the row is written: `probabilities` may be `logits` itself (scoredLogits)
    const labelLogit = logits[rowAt + label];
    let max = -Infinity;
    let logitSum = 0;
    for (let c = 0; c < k; c++) {
      const z = logits[rowAt + c];
      logitSum += z;
      if (z > max) max = z;
    }
    if (!Number.isFinite(logitSum)) failOnRow(logits, rowAt, k);
    let sum = 0;
    for (let c = 0; c < k; c++) {
      const e = expNonPositive(logits[rowAt + c] - max);
      probabilities[offset + c] = e;
      sum += e;
    }
    const inv = 1 / sum;
    let best = 0;
    let bestProbability = -1;
    let brier = 0;
    for (let c = 0; c < k; c++) {
      const p = probabilities[offset + c] * inv;
      probabilities[offset + c] = p;
      if (p > bestProbability) {
        bestProbability = p;
        best = c;
      }
      const d = p - (c === label ? 1 : 0);
      brier += d * d;
    }
    sampleNll[i] = max + Math.log(sum) - labelLogit;
    sampleBrier[i] = brier;
    confidence[i] = bestProbability;
    predicted[i] = best;
    correct[i] = best === label ? 1 : 0;
  }
}

function failOnRow(logits: LogitArray, offset: number, classCount: number): never {
  for (let c = 0; c < classCount; c++) {
    const z = logits[offset + c];
    if (!Number.isFinite(z)) fail(`logit ${c} of sample ${offset / classCount} is not finite (${z})`);
  }
  fail(`the logits of sample ${offset / classCount} are too large to sum in float64`);
}
