/**
 * What every binned metric needs of a binning: per-bin counts, positives and mean score. Exact
 * (BinStatistics) and exponentially forgetting (ForgettingBinStatistics) accumulators both provide it.
 */
export interface BinTotals {
  readonly binCount: number;
  readonly counts: Float64Array;
  readonly positives: Float64Array;
  total(): number;
  meanScore(bin: number): number;
  positiveRate(bin: number): number;
}

/**
 * Binned calibration errors from per-bin statistics (DEFINITIONS.md 4.1, 4.3, 4.7). With
 * acc_b = positives / n_b and conf_b = mean score of the bin; empty bins contribute nothing.
 */

/** ECE = sum_b (n_b/n) |acc_b - conf_b|. */
export function expectedCalibrationError(stats: BinTotals): number {
  return lpCalibrationError(stats, 1);
}

/** l_p calibration error (sum_b (n_b/n) |acc_b - conf_b|^p)^(1/p); p = 2 is the plug-in RMSCE. */
export function lpCalibrationError(stats: BinTotals, p: number): number {
  const n = stats.total();
  let sum = 0;
  for (let b = 0; b < stats.binCount; b++) {
    const nb = stats.counts[b];
    if (nb === 0) continue;
    const gap = Math.abs(stats.positiveRate(b) - stats.meanScore(b));
    sum += (nb / n) * (p === 1 ? gap : gap ** p);
  }
  return p === 1 ? sum : sum ** (1 / p);
}

/** MCE = max over non-empty bins of |acc_b - conf_b|. */
export function maximumCalibrationError(stats: BinTotals): number {
  let max = 0;
  for (let b = 0; b < stats.binCount; b++) {
    if (stats.counts[b] === 0) continue;
    max = Math.max(max, Math.abs(stats.positiveRate(b) - stats.meanScore(b)));
  }
  return max;
}

/**
 * Kumar, Liang & Ma (2019) debiased squared l2 error, as uncertainty-calibration implements it:
 * sum_b (n_b/n) [(conf_b - acc_b)^2 - acc_b (1 - acc_b) / (n_b - 1)], bins with n_b < 2 add 0.
 * May be negative; debiasedL2 clips at 0 before the square root.
 */
export function debiasedSquaredCalibrationError(stats: BinTotals): number {
  const n = stats.total();
  let sum = 0;
  for (let b = 0; b < stats.binCount; b++) {
    const nb = stats.counts[b];
    if (nb < 2) continue;
    const acc = stats.positiveRate(b);
    const gap = stats.meanScore(b) - acc;
    sum += (nb / n) * (gap * gap - (acc * (1 - acc)) / (nb - 1));
  }
  return sum;
}

export function debiasedL2CalibrationError(stats: BinTotals): number {
  return Math.sqrt(Math.max(0, debiasedSquaredCalibrationError(stats)));
}

/** netcal's ACE (Neumann et al. 2018, *average* CE): unweighted mean of |acc_b - conf_b| over non-empty bins. */
export function averageCalibrationError(stats: BinTotals): number {
  let sum = 0;
  let nonEmpty = 0;
  for (let b = 0; b < stats.binCount; b++) {
    if (stats.counts[b] === 0) continue;
    sum += Math.abs(stats.positiveRate(b) - stats.meanScore(b));
    nonEmpty++;
  }
  return nonEmpty === 0 ? 0 : sum / nonEmpty;
}

/** sum_b (n_b/n) f(acc_b) over non-empty bins. */
function weightedOverBins(stats: BinTotals, f: (accuracy: number) => number): number {
  const n = stats.total();
  let sum = 0;
  for (let b = 0; b < stats.binCount; b++) {
    const nb = stats.counts[b];
    if (nb > 0) sum += (nb / n) * f(stats.positiveRate(b));
  }
  return sum;
}

/** Sharpness (Gupta) sum_b (n_b/n) acc_b^2 (higher = sharper). */
export function sharpness(stats: BinTotals): number {
  return weightedOverBins(stats, (acc) => acc * acc);
}

/** Refinement sum_b (n_b/n) acc_b (1 - acc_b) (Murphy's decomposition). */
export function refinement(stats: BinTotals): number {
  return weightedOverBins(stats, (acc) => acc * (1 - acc));
}
