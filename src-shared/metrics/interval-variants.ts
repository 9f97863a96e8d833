import binomialCdf from '@stdlib/stats-base-dists-binomial-cdf';
import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import { KnobError } from '../errors';
import { percentileOfSorted } from './order-statistics';
import { levelPercent } from './bootstrap';

/**
 * The intervals the headline figures use besides the plain percentile bootstrap, each a pure
 * function, each contains its estimate (or says why not):
 * - a proportion: the Wilson score interval (Wilson 1927), never degenerate at 0 % or 100 %
 *   (62 of 62 correct: [0.9417, 1] at 95 %); Clopper-Pearson's exact interval beside it;
 * - binned ECE: a bias-corrected basic bootstrap interval. The plug-in binned ECE is biased upward
 *   (|mean gap| over a bin is at least the |expected gap|), and its resamples twice over, so the
 *   percentile interval can lie wholly above the estimate. The basic (reverse-percentile)
 *   interval [2 t - q(1 - a/2), 2 t - q(a/2)] reflects the resamples' excess back (Davison &
 *   Hinkley 1997, eq. 5.6): an interval around the bias-corrected estimate t - (mean t* - t),
 *   clipped at 0. When that lies below the plug-in estimate it is widened up to it (a wider
 *   interval keeps its coverage) and the figure says so.
 */
export interface FigureInterval {
  lo: number;
  hi: number;
  /** The exact variant: level, method, resamples, seed. */
  method: string;
  /** Why the interval is not simply the method's (set when it was widened to the estimate). */
  note?: string;
}

function checkLevel(level: number): void {
  if (!(level > 0 && level < 1)) throw new KnobError('INVALID_INPUT', `interval level must be in (0, 1), got ${level}`);
}

/**
 * Wilson score interval of a proportion: the p with |p_hat - p| <= z sqrt(p (1 - p) / n), i.e.
 * (p_hat + z^2/2n -+ z sqrt(p_hat (1 - p_hat)/n + z^2/4n^2)) / (1 + z^2/n). `trials` may be an
 * effective sample size (not an integer) for a weighted mean of proportions.
 */
export function wilsonInterval(proportion: number, trials: number, level = 0.95): { lo: number; hi: number } {
  checkLevel(level);
  if (!(trials > 0) || !(proportion >= 0 && proportion <= 1))
    throw new KnobError('INVALID_INPUT', `Wilson interval of ${proportion} over ${trials} trials`);
  const z = normalQuantile(1 - (1 - level) / 2, 0, 1);
  const z2n = (z * z) / trials;
  const centre = (proportion + z2n / 2) / (1 + z2n);
  const half = (z * Math.sqrt((proportion * (1 - proportion)) / trials + z2n / (4 * trials))) / (1 + z2n);
  // the end points are exact at 0 and 1 (p_hat = 0 gives lo = 0, p_hat = 1 gives hi = 1)
  return {
    lo: proportion === 0 ? 0 : Math.min(proportion, Math.max(0, centre - half)),
    hi: proportion === 1 ? 1 : Math.max(proportion, Math.min(1, centre + half)),
  };
}

/**
 * Clopper-Pearson (exact) interval of x successes in n trials: lo solves P(X >= x | lo) = a/2,
 * hi solves P(X <= x | hi) = a/2 (bisection on the binomial CDF to 1e-12; closed forms at x = 0
 * and x = n: hi = 1 - (a/2)^(1/n), lo = (a/2)^(1/n)).
 */
export function clopperPearsonInterval(successes: number, trials: number, level = 0.95): { lo: number; hi: number } {
  checkLevel(level);
  if (!(Number.isInteger(successes) && Number.isInteger(trials) && trials > 0 && successes >= 0 && successes <= trials))
    throw new KnobError('INVALID_INPUT', `Clopper-Pearson interval of ${successes} of ${trials}`);
  const tail = (1 - level) / 2;
  const solve = (f: (p: number) => number): number => {
    // f decreasing in p from positive to negative
    let a = 0;
    let b = 1;
    while (b - a > 1e-12) {
      const m = (a + b) / 2;
      if (f(m) > 0) a = m;
      else b = m;
    }
    return (a + b) / 2;
  };
  const lo =
    successes === 0
      ? 0
      : successes === trials
        ? tail ** (1 / trials)
        : solve((p) => tail - (1 - binomialCdf(successes - 1, trials, p)));
  const hi =
    successes === trials
      ? 1
      : successes === 0
        ? 1 - tail ** (1 / trials)
        : solve((p) => binomialCdf(successes, trials, p) - tail);
  return { lo, hi };
}

/** The Wilson interval of a figure that is a (weighted mean of) proportion(s), labelled. */
export function proportionInterval(
  proportion: number,
  effectiveTrials: number,
  level: number,
  groups: number,
): FigureInterval {
  const { lo, hi } = wilsonInterval(proportion, effectiveTrials, level);
  const n = Number.isInteger(effectiveTrials) ? String(effectiveTrials) : effectiveTrials.toPrecision(6);
  return {
    lo,
    hi,
    method:
      groups > 1
        ? `${levelPercent(level)} Wilson score interval of the mean over ${groups} groups, effective n = 1 / sum w_g^2 / n_g (Kish) = ${n}`
        : `${levelPercent(level)} Wilson score interval, n = ${n}`,
  };
}

/**
 * The bias-corrected basic bootstrap interval of an estimate >= 0 from its resamples (sorted in
 * place), widened to the estimate where it lies below it (see the file's comment).
 */
export function biasCorrectedBasicInterval(
  estimate: number,
  draws: Float64Array,
  level: number,
  resampling: string,
): FigureInterval {
  checkLevel(level);
  draws.sort();
  const alpha = (1 - level) / 2;
  const qLo = percentileOfSorted(draws, alpha);
  const qHi = percentileOfSorted(draws, 1 - alpha);
  let mean = 0;
  for (let r = 0; r < draws.length; r++) mean += draws[r] / draws.length;
  const bias = mean - estimate;
  const lo = Math.max(0, 2 * estimate - qHi);
  const hi = Math.max(0, 2 * estimate - qLo);
  const method =
    `${levelPercent(level)} bias-corrected basic bootstrap [2 t - q(${Number((1 - alpha).toPrecision(6))}), 2 t - q(${Number(alpha.toPrecision(6))})] clipped at 0, ` +
    `widened to contain t, ${resampling}`;
  if (estimate >= lo && estimate <= hi) return { lo, hi, method };
  const debiased = Math.max(0, estimate - bias);
  return {
    lo: Math.min(lo, estimate),
    hi: Math.max(hi, estimate),
    method,
    note:
      `the resamples' mean is ${bias >= 0 ? 'above' : 'below'} the plug-in estimate by ${Math.abs(bias).toPrecision(3)} ` +
      `(binned ECE is biased upward, its resamples more so), ` +
      `so the bias-corrected interval [${lo.toPrecision(4)}, ${hi.toPrecision(4)}] around the bias-corrected ` +
      `estimate ${debiased.toPrecision(4)} lay ${hi < estimate ? 'below' : 'above'} it; widened to contain it`,
  };
}

/** A percentile interval, widened (and saying so) in the rare case it excludes its estimate. */
export function containingPercentile(estimate: number, lo: number, hi: number, method: string): FigureInterval {
  // an end that is NaN (a statistic undefined on many resamples) says nothing to widen against
  if (!Number.isFinite(estimate) || Number.isNaN(lo) || Number.isNaN(hi) || (estimate >= lo && estimate <= hi))
    return { lo, hi, method };
  return {
    lo: Math.min(lo, estimate),
    hi: Math.max(hi, estimate),
    method,
    note: `the percentile interval [${lo.toPrecision(4)}, ${hi.toPrecision(4)}] excluded the estimate (a skewed resampling distribution); widened to contain it`,
  };
}
