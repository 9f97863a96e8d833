import { binningIdentity, type BinningSpec } from './binning';
import { binnedStatistics, classwiseBinnedStatistics } from './column-statistics';
import {
  averageCalibrationError,
  type BinTotals,
  debiasedL2CalibrationError,
  debiasedSquaredCalibrationError,
  expectedCalibrationError,
  lpCalibrationError,
  maximumCalibrationError,
  refinement,
  sharpness,
} from './calibration-error';
import { everyClassNotComputed, metric, type MetricValue } from './metric-value';
import type { ClassScores, TopLabelScores } from './scores';

/** Every binned metric of the top-label pairs (confidence, correct) under one binning. */
export function topLabelBinnedMetrics(top: TopLabelScores, spec: BinningSpec): MetricValue[] {
  return binnedMetricsFromStatistics(binnedStatistics(top.confidence, top.correct, spec), binningIdentity(spec));
}

/** A top-label binned metric's identity: `ECE(top-label, 15 equal-width bins, ..., L1)`. */
export function topLabelBinnedIdentity(what: string, binning: string, norm: string): string {
  return `${what}(top-label, ${binning}, ${norm})`;
}

/** The same metrics from statistics (batch or streaming); `binning` names the bins in identities. */
export function binnedMetricsFromStatistics(stats: BinTotals, binning: string, approximation?: string): MetricValue[] {
  const id = (what: string, norm: string): string => topLabelBinnedIdentity(what, binning, norm);
  return [
    metric('ECE', id('ECE', 'L1'), expectedCalibrationError(stats), approximation),
    metric('MCE', id('MCE', 'max'), maximumCalibrationError(stats), approximation),
    metric('RMSCE', id('RMSCE', 'L2 plug-in'), lpCalibrationError(stats, 2), approximation),
    metric(
      'debiased L2-CE',
      id('CE', 'L2 debiased, Kumar et al. 2019'),
      debiasedL2CalibrationError(stats),
      approximation,
    ),
    metric(
      'ACE (netcal)',
      id('ACE', 'unweighted mean over non-empty bins, netcal / Neumann et al. 2018'),
      averageCalibrationError(stats),
      approximation,
    ),
    metric('sharpness', id('sharpness', 'sum (n_b/n) acc_b^2'), sharpness(stats), approximation),
    metric('refinement', id('refinement', 'sum (n_b/n) acc_b (1 - acc_b)'), refinement(stats), approximation),
  ];
}

/** Per class k, the statistics of the binary pairs (p_ik, 1[y_i = k]) binned under `spec`. */
export function classwiseStatistics(scores: ClassScores, spec: BinningSpec): BinTotals[] {
  return classwiseStatisticsUnder(scores, [spec])[0]!;
}

/** classwiseStatistics under each binning, read together (column-statistics.ts): result[b][k]. */
export function classwiseStatisticsUnder(scores: ClassScores, specs: readonly BinningSpec[]): BinTotals[][] {
  const { probabilities, labels, classCount } = scores;
  return classwiseBinnedStatistics(probabilities, labels, classCount, 0, classCount, specs);
}

/**
 * Classwise (marginal) metrics: classwise ECE = (1/K) sum_k ECE_k (Kull et al. 2019; Nixon's SCE
 * with equal-width bins) and the marginal debiased l2 error ((1/K) sum_k max(0, CE^2_k))^(1/2)
 * (Kumar et al. 2019, as uncertainty-calibration's marginal mode).
 */
export function classwiseMetrics(scores: ClassScores, spec: BinningSpec): MetricValue[] {
  return classwiseMetricsFromStatistics(classwiseStatistics(scores, spec), binningIdentity(spec));
}

/** classwiseMetrics under each binning, in binning order (CLASSWISE_METRICS_PER_BINNING each). */
export function classwiseMetricsUnder(scores: ClassScores, specs: readonly BinningSpec[]): MetricValue[] {
  return classwiseMetricsOf(classwiseStatisticsUnder(scores, specs), specs);
}

/** classwiseMetricsUnder from the statistics classwiseStatisticsUnder made for `specs`. */
export function classwiseMetricsOf(statistics: BinTotals[][], specs: readonly BinningSpec[]): MetricValue[] {
  return statistics.flatMap((perClass, b) => classwiseMetricsFromStatistics(perClass, binningIdentity(specs[b]!)));
}

/** Values classwiseMetricsFromStatistics gives for one binning. */
export const CLASSWISE_METRICS_PER_BINNING = 2;

export function classwiseMetricsFromStatistics(
  perClass: BinTotals[],
  binning: string,
  approximation?: string,
): MetricValue[] {
  let ece = 0;
  let squared = 0;
  for (const stats of perClass) {
    ece += expectedCalibrationError(stats);
    squared += Math.max(0, debiasedSquaredCalibrationError(stats));
  }
  const k = perClass.length;
  return classwiseMetricValues(ece / k, Math.sqrt(squared / k), k, binning, approximation);
}

/** The classwise metrics under each binning, marked not computed (every class of every frame, not read). */
export function classwiseNotComputed(specs: readonly BinningSpec[], classCount: number): MetricValue[] {
  return specs.flatMap((spec) =>
    classwiseMetricValues(Number.NaN, Number.NaN, classCount, binningIdentity(spec)).map((m) =>
      everyClassNotComputed(m.name, m.identity, classCount),
    ),
  );
}

function classwiseMetricValues(
  ece: number,
  marginalL2: number,
  k: number,
  binning: string,
  approximation?: string,
): MetricValue[] {
  return [
    metric('classwise ECE', `ECE(classwise, ${binning} per class, L1, mean over ${k} classes)`, ece, approximation),
    metric(
      'marginal debiased L2-CE',
      `CE(marginal, ${binning} per class, L2 debiased, Kumar et al. 2019)`,
      marginalL2,
      approximation,
    ),
  ];
}

/**
 * Top-label ECE per predicted class (Gupta & Ramdas 2021): ECE within each predicted class, then
 * weighted by n_l / n (TL-ECE) and unweighted (MAPIE's top_label_ece). Classes never predicted
 * are left out of both.
 */
export function topLabelPerClassMetrics(top: TopLabelScores, classCount: number, spec: BinningSpec): MetricValue[] {
  const n = top.confidence.length;
  // Group samples by predicted class once (counting sort), then bin each group.
  const starts = new Int32Array(classCount + 1);
  for (let i = 0; i < n; i++) starts[top.predicted[i] + 1]++;
  for (let c = 0; c < classCount; c++) starts[c + 1] += starts[c];
  const fill = starts.slice(0, classCount);
  const confidence = new Float64Array(n);
  const correct = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const at = fill[top.predicted[i]]++;
    confidence[at] = top.confidence[i];
    correct[at] = top.correct[i];
  }
  let weighted = 0;
  let unweighted = 0;
  let classesPredicted = 0;
  for (let c = 0; c < classCount; c++) {
    const count = starts[c + 1] - starts[c];
    if (count === 0 || (spec.scheme === 'equal-mass' && count < spec.bins)) continue;
    const groupConfidence = confidence.subarray(starts[c], starts[c + 1]);
    const ece = expectedCalibrationError(
      binnedStatistics(groupConfidence, correct.subarray(starts[c], starts[c + 1]), spec),
    );
    weighted += (count / n) * ece;
    unweighted += ece;
    classesPredicted++;
  }
  const binning = binningIdentity(spec);
  return [
    metric(
      'TL-ECE',
      `ECE(top-label per predicted class, ${binning}, L1, weighted by n_l/n, Gupta & Ramdas 2021)`,
      weighted,
    ),
    metric(
      'TL-ECE (unweighted)',
      `ECE(top-label per predicted class, ${binning}, L1, unweighted mean over ${classesPredicted} classes, MAPIE)`,
      classesPredicted === 0 ? 0 : unweighted / classesPredicted,
    ),
  ];
}
