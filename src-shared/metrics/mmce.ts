import { KnobError } from '../errors';
import { metric, type MetricValue } from './metric-value';

/**
 * MMCE (Kumar, Sarawagi & Jain 2018) as netcal computes it: sqrt((1/n^2) sum_ij r_i r_j k(c_i, c_j)),
 * r = correct - confidence, k(a, b) = exp(-2.5 |a - b|) (Laplacian, width 0.4).
 *
 * Exact at every n in O(n log n), not O(n^2): the Laplacian kernel factorises along the sorted
 * confidences. With c sorted ascending, sum_ij = sum_i r_i^2 + 2 sum_i r_i P_i where
 * P_i = sum_{j<i} r_j exp(-2.5 (c_i - c_j)) obeys P_i = exp(-2.5 (c_i - c_{i-1})) (P_{i-1} + r_{i-1}):
 * every factor is at most 1, so the recursion neither overflows nor loses more than the pairwise
 * sum does (the same value within 1e-12 of netcal's, tests/unit/calibration-reference.test.ts).
 * Ties (equal confidences) are a factor of 1, in any order.
 */
export const MMCE_IDENTITY = "MMCE(top-label, Laplacian kernel exp(-2.5 |c - c'|), netcal, exact)";

export function mmce(confidence: Float64Array, correct: ArrayLike<number>): MetricValue {
  const n = confidence.length;
  if (n === 0) throw new KnobError('INVALID_INPUT', 'MMCE of an empty sample');
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((a, b) => confidence[a]! - confidence[b]!);
  let sum = 0;
  let carried = 0; // P_i
  let previousConfidence = 0;
  let previousResidual = 0;
  for (let rank = 0; rank < n; rank++) {
    const i = order[rank]!;
    const c = confidence[i]!;
    const r = correct[i]! - c;
    if (rank > 0) carried = Math.exp(-2.5 * (c - previousConfidence)) * (carried + previousResidual);
    sum += r * r + 2 * r * carried;
    previousConfidence = c;
    previousResidual = r;
  }
  return metric('MMCE', MMCE_IDENTITY, Math.sqrt(Math.max(0, sum) / (n * n)));
}
