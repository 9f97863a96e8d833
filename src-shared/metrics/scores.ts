import { KnobError } from '../errors';
import { softmaxRowInto, type LogitArray } from '../fusion/logits';

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
}

export interface TopLabelScores {
  /** max_k p_ik */
  confidence: Float64Array;
  /** argmax_k p_ik, lowest index on ties */
  predicted: Int32Array;
  /** 1 when predicted = label */
  correct: Uint8Array;
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
  const checked = checkedShapeAndLabels(logits, classCount, labels);
  const n = checked.length;
  const probabilities = new Float64Array(n * classCount);
  const sampleNll = new Float64Array(n);
  softmaxRowsInto(logits, checked, classCount, 0, n, probabilities, sampleNll);
  return { sampleCount: n, classCount, probabilities, labels: checked, logits, sampleNll };
}

/** Validates the shape and the labels as scoresFromLogits does; returns the labels as Int32. */
export function checkedShapeAndLabels(logits: LogitArray, classCount: number, labels: ArrayLike<number>): Int32Array {
  checkShape(logits.length, classCount, labels);
  return checkedLabels(labels, classCount);
}

/**
 * Softmax and log-sum-exp of rows [from, to) into the caller's arrays (any thread's share),
 * refusing a non-finite logit with its sample and class. The check rides on the pass: the sum of
 * every logit of the rows is finite exactly when each one is (float32-range logits cannot overflow
 * it), and only then is the input scanned for the culprit.
 */
export function softmaxRowsInto(
  logits: LogitArray,
  labels: Int32Array,
  classCount: number,
  from: number,
  to: number,
  probabilities: Float64Array,
  sampleNll: Float64Array,
): void {
  let total = 0;
  for (let i = from; i < to; i++) {
    const offset = i * classCount;
    for (let c = 0; c < classCount; c++) total += logits[offset + c];
    sampleNll[i] = softmaxRowInto(logits, offset, classCount, probabilities, offset) - logits[offset + labels[i]];
  }
  if (Number.isFinite(total)) return;
  for (let i = from * classCount; i < to * classCount; i++) {
    if (!Number.isFinite(logits[i]))
      fail(`logit ${i % classCount} of sample ${Math.floor(i / classCount)} is not finite (${logits[i]})`);
  }
  fail('the logits are too large to sum in float64');
}

export function scoresFromProbabilities(
  probabilities: ArrayLike<number>,
  classCount: number,
  labels: ArrayLike<number>,
): ClassScores {
  const n = checkShape(probabilities.length, classCount, labels);
  const out = Float64Array.from(probabilities);
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let k = 0; k < classCount; k++) {
      const p = out[i * classCount + k];
      if (!(p >= 0 && p <= 1)) fail(`probability ${k} of sample ${i} is outside [0, 1] (${p})`);
      sum += p;
    }
    if (Math.abs(sum - 1) > 1e-6) fail(`probabilities of sample ${i} sum to ${sum}, not 1`);
  }
  return {
    sampleCount: n,
    classCount,
    probabilities: out,
    labels: checkedLabels(labels, classCount),
    logits: null,
    sampleNll: null,
  };
}

export function topLabelScores(scores: ClassScores): TopLabelScores {
  const n = scores.sampleCount;
  const top = { confidence: new Float64Array(n), predicted: new Int32Array(n), correct: new Uint8Array(n) };
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
 * One pass over rows [from, to) for the parallel suite: the softmax (as softmaxRowsInto) and the
 * top-label pairs (as topLabelRowsInto), block by block so the top-label pass reads rows still in
 * the cache.
 */
export function scoreRowsInto(
  logits: LogitArray,
  labels: Int32Array,
  classCount: number,
  from: number,
  to: number,
  out: { probabilities: Float64Array; sampleNll: Float64Array; top: TopLabelScores },
): void {
  for (let start = from; start < to; start += ROW_BLOCK) {
    const end = Math.min(to, start + ROW_BLOCK);
    softmaxRowsInto(logits, labels, classCount, start, end, out.probabilities, out.sampleNll);
    topLabelRowsInto(out.probabilities, labels, classCount, start, end, out.top);
  }
}

/** Rows per block of scoreRowsInto: 2,048 rows x 10 classes x 8 bytes stay in a 256 KB cache. */
const ROW_BLOCK = 2048;
