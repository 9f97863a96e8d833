import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import { KnobError } from '../errors';
import { assignBins, binningIdentity, type BinningSpec } from './binning';
import type { CancelSignal } from '../cancel-signal';
import { eachResample, levelPercent, type BootstrapInterval } from './bootstrap';
import { COUNTED_FROM_VALUES, drawCounts } from './draw-counts';
import { biasCorrectedBasicInterval } from './interval-variants';
import { metric, type MetricValue } from './metric-value';
import { checkScoresAndOutcomes } from './test-based-calibration-error';

/**
 * An asymptotically valid confidence interval for the binned l2 calibration error (Sun, Chaudhari,
 * Barnett & Dobriban 2024, "A confidence interval for the l2 expected calibration error",
 * arXiv 2408.08998), next to the bootstrap ones.
 *
 * Estimand, for a fixed binning with bin probabilities p_b: CE^2 = sum_b p_b mu_b^2, with
 * mu_b = E[y - s | bin b] (top-label: y = correct, s = confidence).
 * Estimator (debiased): within bin b with residuals r_i = y_i - s_i, the U-statistic
 *   U_b = (1 / (n_b (n_b - 1))) sum_{i != j} r_i r_j = (S_b^2 - Q_b) / (n_b (n_b - 1)),
 * unbiased for mu_b^2 (S_b = sum r_i, Q_b = sum r_i^2), and T = sum_b (n_b / n) U_b (bins with
 * n_b < 2 add 0). When the scores are constant within a bin it equals Kumar et al.'s
 * (s_b - y_b)^2 - y_b (1 - y_b) / (n_b - 1); otherwise it also removes the score spread.
 *
 * Variance, conditional on the bin counts, from the Hoeffding decomposition of each U-statistic:
 *   Var U_b = (4 (n_b - 2) zeta1 + 2 zeta2) / (n_b (n_b - 1)),
 *   zeta1 = mu_b^2 sigma_b^2,  zeta2 = sigma_b^4 + 2 mu_b^2 sigma_b^2  (sigma_b^2 = Var(r | b)).
 * For a miscalibrated model (some mu_b != 0) the zeta1 term dominates and T converges at rate
 * n^(-1/2); for a calibrated one zeta1 = 0 and T converges at rate n^(-1) with variance
 * 2 sum_b p_b^2 sigma_b^4 / n_b^2: the two regimes of the paper. Both terms are estimated, mu_b^2
 * by U_b itself (unbiased; the plug-in mean^2 would add sigma_b^2 / n_b per bin and inflate the
 * calibrated model's interval) with the sum of the mu-terms over bins clipped at 0, so one formula
 * moves between the regimes without a pre-test.
 * Non-negativity: CE^2 >= 0, so the normal interval T +- z se is intersected with [0, inf); the
 * interval for CE is the square root of its end points (monotone, so coverage carries over).
 */
export interface L2CalibrationErrorInterval {
  /** T: the debiased estimate of CE^2 (may be negative when the model is calibrated). */
  squaredEstimate: number;
  squaredStandardError: number;
  squaredLo: number;
  squaredHi: number;
  /** sqrt(max(0, T)). */
  estimate: number;
  lo: number;
  hi: number;
  level: number;
  /** 'calibrated' when the zeta2 (rate 1/n) term dominates the variance, else 'miscalibrated'. */
  regime: 'calibrated' | 'miscalibrated';
  /** How the interval was made. */
  identity: string;
  /** The identity of the estimate it is an interval of. */
  valueIdentity: string;
}

export const L2_CE_U_STATISTIC_NAME = 'debiased L2-CE (U-statistic)';

/** The identity of the estimate: the value its intervals (asymptotic and bootstrap) are keyed by. */
export function l2CeUStatisticIdentity(binning: string): string {
  return `CE(top-label, ${binning}, L2 debiased U-statistic, Sun et al. 2024)`;
}

/** Per-bin residual sums: what the estimator and its variance need. */
export interface ResidualBinSums {
  counts: Float64Array;
  /** S_b = sum of r_i = y_i - s_i */
  sums: Float64Array;
  /** Q_b = sum of r_i^2 */
  squares: Float64Array;
}

export function residualBinSums(
  confidence: Float64Array,
  correct: Uint8Array,
  binOf: Int32Array,
  binCount: number,
  indices: Uint32Array | null = null,
): ResidualBinSums {
  const counts = new Float64Array(binCount);
  const sums = new Float64Array(binCount);
  const squares = new Float64Array(binCount);
  const n = indices === null ? confidence.length : indices.length;
  for (let t = 0; t < n; t++) {
    const i = indices === null ? t : indices[t];
    const b = binOf[i];
    const r = correct[i] - confidence[i];
    counts[b] += 1;
    sums[b] += r;
    squares[b] += r * r;
  }
  return { counts, sums, squares };
}

/**
 * residualBinSums of a resample from its draw counts (draw-counts.ts): sample i added counts[i]
 * times, in one pass in order (a count of 0 adds zeros).
 */
function countedResidualBinSums(
  confidence: Float64Array,
  correct: Uint8Array,
  binOf: Int32Array,
  binCount: number,
  drawCountOf: Int32Array,
): ResidualBinSums {
  const counts = new Float64Array(binCount);
  const sums = new Float64Array(binCount);
  const squares = new Float64Array(binCount);
  for (let i = 0; i < drawCountOf.length; i++) {
    const c = drawCountOf[i]!;
    const b = binOf[i]!;
    const r = correct[i]! - confidence[i]!;
    counts[b]! += c;
    sums[b]! += c * r;
    squares[b]! += c * r * r;
  }
  return { counts, sums, squares };
}

/** T = sum_b (n_b / n) U_b. */
export function debiasedSquaredL2FromSums(bins: ResidualBinSums): number {
  let n = 0;
  for (let b = 0; b < bins.counts.length; b++) n += bins.counts[b];
  let total = 0;
  for (let b = 0; b < bins.counts.length; b++) {
    const nb = bins.counts[b];
    if (nb < 2) continue;
    total += (nb / n) * ((bins.sums[b] * bins.sums[b] - bins.squares[b]) / (nb * (nb - 1)));
  }
  return total;
}

export function l2CalibrationErrorIntervalFromSums(
  bins: ResidualBinSums,
  level: number,
  binning: string,
): L2CalibrationErrorInterval {
  if (!(level > 0 && level < 1)) throw new KnobError('INVALID_INPUT', `interval level must be in (0, 1), got ${level}`);
  let n = 0;
  for (let b = 0; b < bins.counts.length; b++) n += bins.counts[b];
  let estimate = 0;
  let linearVariance = 0;
  let quadraticVariance = 0;
  for (let b = 0; b < bins.counts.length; b++) {
    const nb = bins.counts[b];
    if (nb < 2) continue;
    const s = bins.sums[b];
    const u = (s * s - bins.squares[b]) / (nb * (nb - 1));
    const weight = nb / n;
    estimate += weight * u;
    // sigma_b^2: the unbiased sample variance of the residuals in the bin
    const variance = Math.max(0, (bins.squares[b] - (s * s) / nb) / (nb - 1));
    const scale = (weight * weight) / (nb * (nb - 1));
    // zeta1 and the mu^2 part of zeta2 with mu_b^2 estimated by U_b (unbiased, may be negative):
    // their sum over bins is clipped at 0 below, not each bin, so that a calibrated model's
    // noise does not add up one-sidedly
    linearVariance += scale * (4 * (nb - 2) + 4) * u * variance;
    quadraticVariance += scale * 2 * variance * variance;
  }
  linearVariance = Math.max(0, linearVariance);
  const standardError = Math.sqrt(linearVariance + quadraticVariance);
  const z = normalQuantile(1 - (1 - level) / 2, 0, 1);
  const squaredLo = Math.max(0, estimate - z * standardError);
  const squaredHi = Math.max(0, estimate + z * standardError);
  return {
    squaredEstimate: estimate,
    squaredStandardError: standardError,
    squaredLo,
    squaredHi,
    estimate: Math.sqrt(Math.max(0, estimate)),
    lo: Math.sqrt(squaredLo),
    hi: Math.sqrt(squaredHi),
    level,
    regime: linearVariance > quadraticVariance ? 'miscalibrated' : 'calibrated',
    identity:
      `${levelPercent(level)} asymptotic interval (Sun et al. 2024), normal with both ` +
      'variance terms, clipped at 0',
    valueIdentity: l2CeUStatisticIdentity(binning),
  };
}

/** The interval for the top-label pairs (confidence, correct) under `spec`. */
export function l2CalibrationErrorInterval(
  confidence: Float64Array,
  correct: Uint8Array,
  spec: BinningSpec,
  level = 0.95,
): L2CalibrationErrorInterval {
  checkPairs(confidence, correct);
  const bins = assignBins(confidence, spec);
  return l2CalibrationErrorIntervalFromSums(
    residualBinSums(confidence, correct, bins.binOf, bins.binCount),
    level,
    binningIdentity(spec),
  );
}

function checkPairs(confidence: Float64Array, correct: Uint8Array): void {
  if (correct.length !== confidence.length)
    throw new KnobError('INVALID_INPUT', `${confidence.length} confidences but ${correct.length} outcomes`);
  checkScoresAndOutcomes(confidence, correct);
}

/** sqrt(max(0, T)) as a metric of the suite, under an equal-width (fixed) binning. */
export function l2CeUStatisticMetric(confidence: Float64Array, correct: Uint8Array, spec: BinningSpec): MetricValue {
  const bins = assignBins(confidence, spec);
  const squared = debiasedSquaredL2FromSums(residualBinSums(confidence, correct, bins.binOf, bins.binCount));
  return metric(L2_CE_U_STATISTIC_NAME, l2CeUStatisticIdentity(binningIdentity(spec)), Math.sqrt(Math.max(0, squared)));
}

/**
 * Both intervals of the estimate side by side: the asymptotic one and a bootstrap one (resampling
 * the samples). A resample repeats samples, and a repeated sample's pairs with itself add r_i^2 to
 * the U-statistic, so the resamples' T* are biased upward: the bootstrap interval is the
 * bias-corrected basic one (interval-variants.ts), widened to the estimate if it lies below it
 * (`note` says so).
 */
export function l2CeIntervalsWithBootstrap(
  confidence: Float64Array,
  correct: Uint8Array,
  spec: BinningSpec,
  level = 0.95,
  options: { replicates?: number; seed?: number; signal?: CancelSignal } = {},
): { asymptotic: L2CalibrationErrorInterval; bootstrap: BootstrapInterval & { note?: string } } {
  checkPairs(confidence, correct);
  const bins = assignBins(confidence, spec);
  const asymptotic = l2CalibrationErrorIntervalFromSums(
    residualBinSums(confidence, correct, bins.binOf, bins.binCount),
    level,
    binningIdentity(spec),
  );
  const replicates = options.replicates ?? 200;
  const seed = options.seed ?? 0;
  const n = confidence.length;
  const draws = new Float64Array(replicates);
  eachResample(n, { replicates, seed, signal: options.signal }, (indices, r) => {
    const sums =
      n < COUNTED_FROM_VALUES
        ? residualBinSums(confidence, correct, bins.binOf, bins.binCount, indices)
        : countedResidualBinSums(confidence, correct, bins.binOf, bins.binCount, drawCounts(indices, n));
    const squared = debiasedSquaredL2FromSums(sums);
    draws[r] = Math.sqrt(Math.max(0, squared));
  });
  const i = biasCorrectedBasicInterval(asymptotic.estimate, draws, level, `${replicates} resamples, seed ${seed}`);
  const bootstrap = { lo: i.lo, hi: i.hi, level, replicates, seed, identity: i.method };
  return { asymptotic, bootstrap: i.note === undefined ? bootstrap : { ...bootstrap, note: i.note } };
}
