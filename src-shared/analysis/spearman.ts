import { KnobError } from '../errors';

/**
 * Spearman's rank correlation: Pearson's correlation of the average ranks (ties share the mean of
 * the ranks they span), as scipy.stats.spearmanr computes it. +Infinity ranks above every finite
 * value (an effective temperature with a zero fused margin); NaN is refused. Null when either
 * variable is constant (the correlation is undefined, scipy's nan).
 */
export function averageRanks(values: ArrayLike<number>): Float64Array {
  const n = values.length;
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < n; i++)
    if (Number.isNaN(values[i]!)) throw new KnobError('INVALID_INPUT', `value ${i} is NaN: it has no rank`);
  order.sort((a, b) => values[a]! - values[b]! || (values[a] === values[b] ? 0 : values[a]! < values[b]! ? -1 : 1));
  const ranks = new Float64Array(n);
  for (let start = 0; start < n;) {
    let end = start + 1;
    while (end < n && values[order[end]!] === values[order[start]!]) end++;
    // ranks start + 1 .. end, averaged
    const rank = (start + 1 + end) / 2;
    for (let i = start; i < end; i++) ranks[order[i]!] = rank;
    start = end;
  }
  return ranks;
}

export function spearmanRho(x: ArrayLike<number>, y: ArrayLike<number>): number | null {
  if (x.length !== y.length) throw new KnobError('INVALID_INPUT', `${x.length} values against ${y.length}`);
  const n = x.length;
  if (n < 2) return null;
  const rx = averageRanks(x);
  const ry = averageRanks(y);
  const mean = (n + 1) / 2;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = rx[i]! - mean;
    const dy = ry[i]! - mean;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0 || syy === 0) return null;
  return sxy / Math.sqrt(sxx * syy);
}
