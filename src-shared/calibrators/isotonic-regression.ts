import { KnobError } from '../errors';
import type { FitReport } from './fit-report';

/**
 * Isotonic regression (Zadrozny & Elkan 2002) by pool-adjacent-violators on (score, outcome),
 * ties in score pooled first. The fitted map is constant on each pooled block, from its lowest to
 * its highest score, linear between blocks and clipped outside the fitted range: scikit-learn's
 * IsotonicRegression with out_of_bounds='clip' (its thresholds are the blocks' end points),
 * checked against its predictions. The output is non-decreasing in the score by construction.
 */
export interface IsotonicParams {
  /** Each block's lowest and highest score (one point for a block of one score), increasing. */
  x: Float64Array;
  /** Fitted values, non-decreasing. */
  y: Float64Array;
}

export function fitIsotonic(
  scores: Float64Array,
  outcomes: ArrayLike<number>,
): { params: IsotonicParams; report: FitReport } {
  const n = scores.length;
  if (n === 0) throw new KnobError('INVALID_INPUT', 'isotonic regression needs calibration data');
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => scores[a] - scores[b] || a - b);
  const { params, pools } = poolAdjacentViolators(scores, outcomes, order);
  let squared = 0;
  const fitted = applyIsotonic(params, scores);
  for (let i = 0; i < n; i++) squared += (fitted[i] - outcomes[i]) ** 2;
  return {
    params,
    report: {
      method: `isotonic regression (pool-adjacent-violators, ${pools} pools)`,
      objectiveName: 'mean squared error',
      objective: squared / n,
      iterations: pools,
      converged: true,
    },
  };
}

/**
 * The fitted map of pool-adjacent-violators over the points taken in `order` (indices by ascending
 * score; null: the scores already ascend), and how many pools it made. fitIsotonic's core, for a
 * caller that fits many times on data it keeps in order (the label-free estimates' bootstrap).
 */
export function poolAdjacentViolators(
  scores: ArrayLike<number>,
  outcomes: ArrayLike<number>,
  order: ArrayLike<number> | null,
): { params: IsotonicParams; pools: number } {
  const n = scores.length;
  const at = (k: number) => (order === null ? k : order[k]);
  const blockLo: number[] = [];
  const blockHi: number[] = [];
  const blockY: number[] = [];
  const blockW: number[] = [];
  let pools = 0;
  for (let k = 0; k < n;) {
    // pool exact ties in score into one point first
    let end = k;
    let sumY = 0;
    while (end < n && scores[at(end)] === scores[at(k)]) sumY += outcomes[at(end++)];
    let w = end - k;
    let lo = scores[at(k)];
    const hi = lo;
    let y = sumY;
    k = end;
    // merge backwards while the previous block's mean exceeds this one's
    while (blockY.length > 0 && blockY[blockY.length - 1] / blockW[blockW.length - 1] > y / w) {
      lo = blockLo.pop()!;
      blockHi.pop();
      y += blockY.pop()!;
      w += blockW.pop()!;
      pools++;
    }
    blockLo.push(lo);
    blockHi.push(hi);
    blockY.push(y);
    blockW.push(w);
  }
  const x: number[] = [];
  const fittedY: number[] = [];
  blockY.forEach((sum, b) => {
    const value = sum / blockW[b];
    x.push(blockLo[b]);
    fittedY.push(value);
    if (blockHi[b] > blockLo[b]) {
      x.push(blockHi[b]);
      fittedY.push(value);
    }
  });
  return { params: { x: Float64Array.from(x), y: Float64Array.from(fittedY) }, pools };
}

/** The calibrated score of one score: linear between the blocks' end points, clipped outside them. */
export function isotonicAt(params: IsotonicParams, s: number): number {
  const { x, y } = params;
  const m = x.length;
  if (m === 1 || s <= x[0]) return y[0];
  if (s >= x[m - 1]) return y[m - 1];
  let lo = 0;
  let hi = m - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (x[mid] <= s) lo = mid;
    else hi = mid;
  }
  const t = (s - x[lo]) / (x[hi] - x[lo]);
  return y[lo] + t * (y[hi] - y[lo]);
}

/**
 * isotonicAt of every score of `ascending` (non-decreasing) into `out`, by one walk along the
 * map's points instead of a search a score: the same arithmetic, so the same values bit for bit.
 */
export function isotonicAtAscending(params: IsotonicParams, ascending: Float64Array, out: Float64Array): void {
  const { x, y } = params;
  const m = x.length;
  let lo = 0;
  for (let j = 0; j < ascending.length; j++) {
    const s = ascending[j];
    if (m === 1 || s <= x[0]) out[j] = y[0];
    else if (s >= x[m - 1]) out[j] = y[m - 1];
    else {
      // x increases strictly: lo is the one index with x[lo] <= s < x[lo + 1], as the search finds
      while (x[lo + 1] <= s) lo++;
      const t = (s - x[lo]) / (x[lo + 1] - x[lo]);
      out[j] = y[lo] + t * (y[lo + 1] - y[lo]);
    }
  }
}

export function applyIsotonic(params: IsotonicParams, scores: Float64Array): Float64Array {
  return scores.map((s) => isotonicAt(params, s));
}
