import { KnobError } from '../errors';
import { argmaxRow, softmaxRowInto, type LogitArray } from '../fusion/logits';

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
  /** log sum_k exp(z_ik) per sample when built from logits (NLL = logSumExp - z_y, no clipping). */
  logSumExp: Float64Array | null;
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
  const n = checkShape(logits.length, classCount, labels);
  for (let i = 0; i < logits.length; i++) {
    if (!Number.isFinite(logits[i]))
      fail(`logit ${i % classCount} of sample ${Math.floor(i / classCount)} is not finite (${logits[i]})`);
  }
  const probabilities = new Float64Array(n * classCount);
  const logSumExp = new Float64Array(n);
  for (let i = 0; i < n; i++)
    logSumExp[i] = softmaxRowInto(logits, i * classCount, classCount, probabilities, i * classCount);
  return { sampleCount: n, classCount, probabilities, labels: checkedLabels(labels, classCount), logits, logSumExp };
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
    logSumExp: null,
  };
}

export function topLabelScores(scores: ClassScores): TopLabelScores {
  const { sampleCount: n, classCount: k, probabilities, labels } = scores;
  const confidence = new Float64Array(n);
  const predicted = new Int32Array(n);
  const correct = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const best = argmaxRow(probabilities, i * k, k);
    confidence[i] = probabilities[i * k + best];
    predicted[i] = best;
    correct[i] = best === labels[i] ? 1 : 0;
  }
  return { confidence, predicted, correct };
}
