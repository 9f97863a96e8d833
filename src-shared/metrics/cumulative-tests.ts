import { metric, type MetricValue } from './metric-value';
import { rankOutcomes, type RankedOutcomes } from './ranked-outcomes';

/**
 * Calibration tests from cumulative differences (Arrieta-Ibarra, Gujral, Tannen, Tygert 2022;
 * DEFINITIONS.md 4.7), on binary pairs (score s_i, outcome y_i) - top-label: (confidence, correct).
 * Scores ascending, exact ties taken as one step (so the result does not depend on sample order);
 * C_k = (1/n) sum_{j<=k} (y_j - s_j);
 * sigma = sqrt(sum s (1 - s)) / n.
 * - KS = max |C_k| / sigma, P-value 1 - D(KS), D the CDF of max |W| of standard Brownian motion
 *   on [0, 1]: D(x) = (2/pi) sum_k (-1)^k / (k + 1/2) exp(-(k + 1/2)^2 pi^2 / (2 x^2)).
 * - Kuiper = (max C - min C) / sigma with C_0 = 0, P-value 1 - F(Kuiper), F the CDF of the range
 *   of Brownian motion (Feller 1951): F(x) = sum_k (8/x^2 + 2/((k + 1/2)^2 pi^2)) exp(-2 (k + 1/2)^2 pi^2 / x^2).
 * - Spiegelhalter Z = sum (y - s)(1 - 2s) / sqrt(sum (1 - 2s)^2 s (1 - s)), two-sided normal P-value.
 * P-values below double precision's reach come out as 0. A score set with sigma = 0 (all scores
 * 0 or 1) has no test: the function then returns null.
 */
export interface CumulativeTests {
  ks: MetricValue;
  ksPValue: MetricValue;
  kuiper: MetricValue;
  kuiperPValue: MetricValue;
  /** null when sum (1 - 2s)^2 s (1 - s) = 0 (every score 0, 1/2 or 1): Z is then undefined. */
  spiegelhalterZ: MetricValue | null;
  spiegelhalterPValue: MetricValue | null;
}

const EPS = 2.220446049250313e-16;

/**
 * Above these the CDFs are 1 in double precision: P(max |B| > x) <= 4 P(B_1 > x) = 2 erfc(x / sqrt 2)
 * is below 1e-300 from x = 38, and a range above x needs max |B| above x / 2. Their series take a
 * number of terms that grows with x, so a scaled statistic of 1e200 (scores whose sigma is tiny)
 * would never finish without the cut.
 */
const MAX_ABS_CDF_ONE = 40;
const RANGE_CDF_ONE = 80;

export function brownianMaxAbsCdf(x: number): number {
  if (!(x > 0)) return 0;
  if (x >= MAX_ABS_CDF_ONE) return 1;
  const terms = Math.ceil(0.5 + ((x * Math.SQRT2) / Math.PI) * Math.sqrt(Math.log(4 / Math.PI / EPS)));
  let sum = 0;
  for (let k = 0; k < terms; k++) {
    const kp = k + 0.5;
    sum += ((k % 2 === 0 ? 1 : -1) / kp) * Math.exp((-kp * kp * Math.PI * Math.PI) / (2 * x * x));
  }
  return Math.min(1, Math.max(0, (2 / Math.PI) * sum));
}

export function brownianRangeCdf(x: number): number {
  if (!(x > 0)) return 0;
  if (x >= RANGE_CDF_ONE) return 1;
  const factor = (4 / Math.sqrt(2 * Math.PI)) * (1 / x + x / (Math.PI * Math.PI));
  const terms = Math.ceil(0.5 + (x / Math.PI / Math.SQRT2) * Math.sqrt(Math.log(factor / EPS)));
  let sum = 0;
  for (let k = 0; k < Math.max(1, terms); k++) {
    const kp = k + 0.5;
    sum += (8 / (x * x) + 2 / (kp * kp * Math.PI * Math.PI)) * Math.exp((-2 * kp * kp * Math.PI * Math.PI) / (x * x));
  }
  return Math.min(1, Math.max(0, sum));
}

/** erfc with relative accuracy ~1e-15 (series below 2, continued fraction above). */
export function erfc(x: number): number {
  if (x < 0) return 2 - erfc(-x);
  if (x < 2) {
    // erf series: 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1))
    let term = x;
    let sum = x;
    for (let n = 1; n < 60; n++) {
      term *= (-x * x) / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return 1 - (2 / Math.sqrt(Math.PI)) * sum;
  }
  // Lentz continued fraction for erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + 1/2/(x + 1/(x + 3/2/(x + ...))))
  const tiny = 1e-300;
  let f = x;
  let c = x;
  let d = 0;
  for (let n = 1; n < 500; n++) {
    const a = n / 2;
    d = x + a * d;
    d = d === 0 ? tiny : d;
    c = x + a / c;
    c = c === 0 ? tiny : c;
    d = 1 / d;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(-x * x) / Math.sqrt(Math.PI) / f;
}

export function normalTwoSidedPValue(z: number): number {
  return erfc(Math.abs(z) / Math.SQRT2);
}

export function cumulativeCalibrationTests(
  scores: Float64Array,
  outcomes: ArrayLike<number>,
  target = 'top-label',
  ranked: RankedOutcomes = rankOutcomes(scores, outcomes),
): CumulativeTests | null {
  const n = scores.length;
  let variance = 0;
  let zNumerator = 0;
  let zVariance = 0;
  for (let i = 0; i < n; i++) {
    const s = scores[i];
    const y = outcomes[i];
    variance += s * (1 - s);
    zNumerator += (y - s) * (1 - 2 * s);
    zVariance += (1 - 2 * s) * (1 - 2 * s) * s * (1 - s);
  }
  if (!(variance > 0)) return null;
  const sigma = Math.sqrt(variance) / n;
  let cumulative = 0;
  let max = 0;
  let min = 0;
  for (let b = 0; b < ranked.blockCount; b++) {
    const positives = ranked.positives[b];
    cumulative += (positives - ranked.scores[b] * (positives + ranked.negatives[b])) / n;
    if (cumulative > max) max = cumulative;
    if (cumulative < min) min = cumulative;
  }
  const maxAbs = Math.max(max, -min);
  const ks = maxAbs / sigma;
  const kuiper = (max - min) / sigma;
  const z = zVariance > 0 ? zNumerator / Math.sqrt(zVariance) : null;
  const id = (what: string): string => `${what}(${target}, cumulative differences, Arrieta-Ibarra et al. 2022)`;
  return {
    ks: metric('KS (scaled)', id('KS statistic, max |C_k| / sigma (scaled by sigma)'), ks),
    ksPValue: metric('KS P-value', id('KS P-value, max |Brownian motion| on [0, 1]'), 1 - brownianMaxAbsCdf(ks)),
    kuiper: metric('Kuiper (scaled)', id('Kuiper statistic, (max C - min C) / sigma (scaled by sigma)'), kuiper),
    kuiperPValue: metric(
      'Kuiper P-value',
      id('Kuiper P-value, range of Brownian motion on [0, 1]'),
      1 - brownianRangeCdf(kuiper),
    ),
    spiegelhalterZ: z === null ? null : metric('Spiegelhalter Z', `Spiegelhalter Z(${target})`, z),
    spiegelhalterPValue:
      z === null
        ? null
        : metric(
            'Spiegelhalter P-value',
            `Spiegelhalter P-value(${target}, two-sided normal)`,
            normalTwoSidedPValue(z),
          ),
  };
}
