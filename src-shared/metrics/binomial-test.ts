import binomialCdf from '@stdlib/stats-base-dists-binomial-cdf';
import binomialPmf from '@stdlib/stats-base-dists-binomial-pmf';

/**
 * Exact two-sided binomial test of H0: k ~ Binomial(n, p), p-value by the "minimum likelihood"
 * rule, as scipy.stats.binomtest(k, n, p, alternative='two-sided') defines it: the probability of
 * every outcome no more likely than the observed one, with scipy's relative tolerance 1e-7 on
 * "no more likely". The pmf is unimodal, so the outcomes on the far side of the mode that count
 * form one tail; its boundary is found by bisection and both tails come from the binomial CDF.
 */
const RELATIVE_TOLERANCE = 1 + 1e-7;

export function binomialTestPValue(successes: number, trials: number, probability: number): number {
  const k = successes;
  const n = trials;
  const p = probability;
  const expected = p * n;
  if (k === expected) return 1;
  const threshold = binomialPmf(k, n, p) * RELATIVE_TOLERANCE;
  let pValue: number;
  if (k < expected) {
    // first outcome in [ceil(np), n] whose pmf is <= threshold (the pmf falls on this side)
    let lo = Math.ceil(expected);
    let hi = n;
    if (binomialPmf(hi, n, p) > threshold) return Math.min(1, binomialCdf(k, n, p));
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (binomialPmf(mid, n, p) <= threshold) hi = mid;
      else lo = mid + 1;
    }
    pValue = binomialCdf(k, n, p) + (lo > 0 ? 1 - binomialCdf(lo - 1, n, p) : 1);
  } else {
    // last outcome in [0, floor(np)] whose pmf is <= threshold (the pmf rises on this side)
    let lo = 0;
    let hi = Math.floor(expected);
    if (binomialPmf(0, n, p) > threshold) return Math.min(1, 1 - binomialCdf(k - 1, n, p));
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (binomialPmf(mid, n, p) <= threshold) lo = mid;
      else hi = mid - 1;
    }
    pValue = binomialCdf(lo, n, p) + (1 - binomialCdf(k - 1, n, p));
  }
  return Math.min(1, pValue);
}
