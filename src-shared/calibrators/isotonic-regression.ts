import { KnobError } from '../errors';
import type { FitReport } from './fit-report';

/**
 * Isotonic regression (Zadrozny & Elkan 2002) by pool-adjacent-violators on (score, outcome),
 * ties in score pooled first. The fitted map interpolates linearly between block centres and is
 * clipped outside the fitted range (as sklearn's IsotonicRegression with out_of_bounds='clip').
 * The output is non-decreasing in the score by construction.
 */
export interface IsotonicParams {
  /** Block positions (mean score of each pooled block), increasing. */
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
  const blockX: number[] = [];
  const blockY: number[] = [];
  const blockW: number[] = [];
  let pools = 0;
  for (let k = 0; k < n;) {
    // pool exact ties in score into one point first
    let end = k;
    let sumY = 0;
    while (end < n && scores[order[end]] === scores[order[k]]) sumY += outcomes[order[end++]];
    let w = end - k;
    let x = scores[order[k]] * w;
    let y = sumY;
    k = end;
    // merge backwards while the previous block's mean exceeds this one's
    while (blockY.length > 0 && blockY[blockY.length - 1] / blockW[blockW.length - 1] > y / w) {
      x += blockX.pop()!;
      y += blockY.pop()!;
      w += blockW.pop()!;
      pools++;
    }
    blockX.push(x);
    blockY.push(y);
    blockW.push(w);
  }
  const params: IsotonicParams = {
    x: Float64Array.from(blockX, (x, i) => x / blockW[i]),
    y: Float64Array.from(blockY, (y, i) => y / blockW[i]),
  };
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

export function applyIsotonic(params: IsotonicParams, scores: Float64Array): Float64Array {
  const { x, y } = params;
  const m = x.length;
  return scores.map((s) => {
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
  });
}
