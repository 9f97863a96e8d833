import { expNonPositive } from './exp-non-positive';

/**
 * Row-wise operations on logits stored row-major in one typed array (row i occupies
 * [i K, (i + 1) K)). Float32 inputs are promoted to float64 for every sum; nothing allocates.
 */
export type LogitArray = Float32Array | Float64Array;

/** log sum_k exp(z_k), shifted by the row maximum so no term overflows. */
export function logSumExpRow(z: LogitArray, offset: number, classCount: number): number {
  let max = -Infinity;
  for (let k = 0; k < classCount; k++) {
    const value = z[offset + k];
    if (value > max) max = value;
  }
  if (max === -Infinity || max === Infinity) return max;
  let sum = 0;
  for (let k = 0; k < classCount; k++) sum += expNonPositive(z[offset + k] - max);
  return max + Math.log(sum);
}

export function logSoftmaxRowInto(
  z: LogitArray,
  offset: number,
  classCount: number,
  out: Float64Array,
  outOffset: number,
): void {
  const lse = logSumExpRow(z, offset, classCount);
  for (let k = 0; k < classCount; k++) out[outOffset + k] = z[offset + k] - lse;
}

/** Writes softmax(z) of one row into `out` and returns log sum_k exp(z_k) of that row. */
export function softmaxRowInto(
  z: LogitArray,
  offset: number,
  classCount: number,
  out: Float64Array,
  outOffset: number,
): number {
  let max = -Infinity;
  for (let k = 0; k < classCount; k++) {
    const value = z[offset + k];
    if (value > max) max = value;
  }
  let sum = 0;
  for (let k = 0; k < classCount; k++) {
    const e = expNonPositive(z[offset + k] - max);
    out[outOffset + k] = e;
    sum += e;
  }
  const inv = 1 / sum;
  for (let k = 0; k < classCount; k++) out[outOffset + k] *= inv;
  return max + Math.log(sum);
}

/** Index of the largest logit; ties go to the lowest index (as numpy's argmax). */
export function argmaxRow(z: LogitArray, offset: number, classCount: number): number {
  let best = 0;
  let max = z[offset];
  for (let k = 1; k < classCount; k++) {
    const value = z[offset + k];
    if (value > max) {
      max = value;
      best = k;
    }
  }
  return best;
}

/** Margin m = top-1 minus top-2 logit (0 for a tie, 0 when there is a single class). */
export function marginRow(z: LogitArray, offset: number, classCount: number): number {
  let first = -Infinity;
  let second = -Infinity;
  for (let k = 0; k < classCount; k++) {
    const value = z[offset + k];
    if (value > first) {
      second = first;
      first = value;
    } else if (value > second) {
      second = value;
    }
  }
  return classCount < 2 ? 0 : first - second;
}

/** Softmax probability of the top class, 1 / sum_k exp(z_k - max). */
export function topProbabilityRow(z: LogitArray, offset: number, classCount: number): number {
  let max = -Infinity;
  for (let k = 0; k < classCount; k++) {
    const value = z[offset + k];
    if (value > max) max = value;
  }
  let sum = 0;
  for (let k = 0; k < classCount; k++) sum += expNonPositive(z[offset + k] - max);
  return 1 / sum;
}
