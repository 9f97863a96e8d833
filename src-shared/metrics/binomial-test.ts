import binomialCdf from '@stdlib/stats-base-dists-binomial-cdf';
import binomialPmf from '@stdlib/stats-base-dists-binomial-pmf';
import { KnobError } from '../errors';

/**
 * Exact two-sided binomial test of H0: k ~ Binomial(n, p), p-value by the "minimum likelihood"
 * rule, as scipy.stats.binomtest(k, n, p, alternative='two-sided') defines it: the probability of
 * every outcome no more likely than the observed one, with scipy's relative tolerance 1e-7 on
 * "no more likely". The pmf is unimodal, so the outcomes on the far side of the mode that count
 * form one tail; its boundary is found by bisection and both tails come from the binomial CDF.
 */
const RELATIVE_TOLERANCE = 1 + 1e-7;

/** P(X >= m) for X ~ Binomial(n, p), as the lower tail of n - X ~ Binomial(n, 1 - p): no 1 - cdf cancellation. */
function upperTail(m: number, n: number, p: number): number {
  return m <= 0 ? 1 : binomialCdf(n - m, n, 1 - p);
}

export function binomialTestPValue(successes: number, trials: number, probability: number): number {
  const k = successes;
  const n = trials;
  const p = probability;
  if (!(Number.isInteger(n) && n >= 1)) throw new KnobError('INVALID_INPUT', `binomial test: ${n} trials`);
  if (!(Number.isInteger(k) && k >= 0 && k <= n))
    throw new KnobError('INVALID_INPUT', `binomial test: ${k} successes in ${n} trials`);
  if (!(p >= 0 && p <= 1)) throw new KnobError('INVALID_INPUT', `binomial test: probability ${p} outside [0, 1]`);
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
    pValue = binomialCdf(k, n, p) + upperTail(lo, n, p);
  } else {
    // last outcome in [0, floor(np)] whose pmf is <= threshold (the pmf rises on this side)
    let lo = 0;
    let hi = Math.floor(expected);
    if (binomialPmf(0, n, p) > threshold) return Math.min(1, upperTail(k, n, p));
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (binomialPmf(mid, n, p) <= threshold) lo = mid;
      else hi = mid - 1;
    }
    pValue = binomialCdf(lo, n, p) + upperTail(k, n, p);
  }
  return Math.min(1, pValue);
}
