import { KnobError } from '../errors';
import { seededRandom } from '../random';

/**
 * Split-conformal prediction sets (DEFINITIONS.md 4.8), marginal coverage >= 1 - alpha under
 * exchangeability.
 * - LAC: score 1 - p_y; set {k : 1 - p_k <= q_hat}.
 * - APS: score = total probability of the classes ranked at or above y (ties ranked by class
 *   index); set {k : score(k) <= q_hat}; `randomized` subtracts U p_y (seeded) for exact coverage.
 * q_hat is the ceil((n + 1)(1 - alpha))-th smallest calibration score (+Infinity when that exceeds
 * n: every class is in every set).
 */
export type ConformalScore = 'lac' | 'aps';

export interface ConformalParams {
  score: ConformalScore;
  alpha: number;
  qHat: number;
  randomized: boolean;
}

function apsScore(probabilities: Float64Array, offset: number, k: number, cls: number, u: number): number {
  const p = probabilities[offset + cls];
  let above = 0;
  for (let c = 0; c < k; c++) {
    const q = probabilities[offset + c];
    if (q > p || (q === p && c < cls)) above += q;
  }
  return above + p * (1 - u);
}

/** The coverage the sets aim at, 1 - alpha, as written (0.93, not 0.9299999999999999). */
export function targetCoverage(alpha: number): number {
  return Number((1 - alpha).toPrecision(12));
}

export function fitConformal(
  probabilities: Float64Array,
  labels: Int32Array,
  classCount: number,
  alpha: number,
  score: ConformalScore,
  options: { randomized?: boolean; seed?: number } = {},
): ConformalParams {
  const n = labels.length;
  if (n === 0) throw new KnobError('INVALID_INPUT', 'conformal calibration needs calibration data');
  if (!(alpha > 0 && alpha < 1)) throw new KnobError('INVALID_INPUT', `alpha must be in (0, 1), got ${alpha}`);
  const randomized = options.randomized ?? false;
  const random = seededRandom(options.seed ?? 0);
  const scores = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const offset = i * classCount;
    scores[i] =
      score === 'lac'
        ? 1 - probabilities[offset + labels[i]]
        : apsScore(probabilities, offset, classCount, labels[i], randomized ? random() : 0);
  }
  scores.sort();
  // (n + 1)(1 - alpha) to 12 digits before the ceiling: 10 x (1 - 0.7) is 3.0000000000000004 in
  // floating point, and its rank is 3, not 4
  const rank = Math.ceil(Number(((n + 1) * (1 - alpha)).toPrecision(12)));
  return { score, alpha, qHat: rank > n ? Infinity : scores[rank - 1], randomized };
}

/** Membership of every class in every sample's set, row-major n x K (1 = in the set). */
export function predictionSets(
  params: ConformalParams,
  probabilities: Float64Array,
  classCount: number,
  seed = 1,
): Uint8Array {
  const n = probabilities.length / classCount;
  const out = new Uint8Array(probabilities.length);
  const random = seededRandom(seed);
  for (let i = 0; i < n; i++) {
    const offset = i * classCount;
    const u = params.randomized ? random() : 0;
    for (let c = 0; c < classCount; c++) {
      const s =
        params.score === 'lac' ? 1 - probabilities[offset + c] : apsScore(probabilities, offset, classCount, c, u);
      out[offset + c] = s <= params.qHat ? 1 : 0;
    }
  }
  return out;
}

export function empiricalCoverage(
  sets: Uint8Array,
  labels: Int32Array,
  classCount: number,
): { coverage: number; meanSetSize: number } {
  let covered = 0;
  let size = 0;
  for (let i = 0; i < labels.length; i++) {
    covered += sets[i * classCount + labels[i]];
    for (let c = 0; c < classCount; c++) size += sets[i * classCount + c];
  }
  return { coverage: covered / labels.length, meanSetSize: size / labels.length };
}
