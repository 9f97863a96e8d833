import { KnobError } from '../errors';
import { seededRandom } from '../random';
import { metric, type MetricValue } from './metric-value';

/**
 * MMCE (Kumar, Sarawagi & Jain 2018) as netcal computes it: sqrt((1/n^2) sum_ij r_i r_j k(c_i, c_j)),
 * r = correct - confidence, k(a, b) = exp(-2.5 |a - b|) (Laplacian, width 0.4).
 *
 * Cost O(n^2): exact up to MMCE_EXACT_LIMIT samples; above it, a uniform subsample of that size
 * drawn with a stated seed (the identity says so), never a silent quadratic blow-up.
 */
export const MMCE_EXACT_LIMIT = 20_000;

export function mmce(confidence: Float64Array, correct: ArrayLike<number>, seed = 0): MetricValue {
  const n = confidence.length;
  if (n === 0) throw new KnobError('INVALID_INPUT', 'MMCE of an empty sample');
  let indices: Uint32Array;
  let identitySuffix = '';
  if (n > MMCE_EXACT_LIMIT) {
    // Partial Fisher-Yates: the first m of a seeded permutation.
    const random = seededRandom(seed);
    const all = new Uint32Array(n);
    for (let i = 0; i < n; i++) all[i] = i;
    for (let i = 0; i < MMCE_EXACT_LIMIT; i++) {
      const j = i + Math.floor(random() * (n - i));
      const t = all[i];
      all[i] = all[j];
      all[j] = t;
    }
    indices = all.subarray(0, MMCE_EXACT_LIMIT);
    identitySuffix = `, uniform subsample of ${MMCE_EXACT_LIMIT} of ${n}, seed ${seed}`;
  } else {
    indices = Uint32Array.from({ length: n }, (_, i) => i);
  }
  const m = indices.length;
  const c = new Float64Array(m);
  const r = new Float64Array(m);
  for (let i = 0; i < m; i++) {
    c[i] = confidence[indices[i]];
    r[i] = correct[indices[i]] - c[i];
  }
  let sum = 0;
  for (let i = 0; i < m; i++) {
    let row = 0;
    for (let j = 0; j < m; j++) row += r[j] * Math.exp(-2.5 * Math.abs(c[i] - c[j]));
    sum += r[i] * row;
  }
  return metric(
    'MMCE',
    `MMCE(top-label, Laplacian kernel exp(-2.5 |c - c'|), netcal, O(n^2)${identitySuffix})`,
    Math.sqrt(Math.max(0, sum) / (m * m)),
  );
}
