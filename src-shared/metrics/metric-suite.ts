import type { BinningSpec } from './binning';
import { classColumns, classwiseMetrics, topLabelBinnedMetrics, topLabelPerClassMetrics } from './binned-metrics';
import { cumulativeCalibrationTests } from './cumulative-tests';
import type { MetricValue } from './metric-value';
import { mmce } from './mmce';
import { accuracy, multiclassBrier, negativeLogLikelihood, topLabelBrier } from './proper-scores';
import type { ClassScores, TopLabelScores } from './scores';
import { topLabelScores } from './scores';
import { rankOutcomes } from './ranked-outcomes';
import { auroc, selectiveRisk } from './selective';
import { smoothEce } from './smooth-ece';
import { l2CeUStatisticMetric } from './calibration-error-interval';
import { testBasedCalibrationError, tceMetric } from './test-based-calibration-error';

/**
 * The full metric set, and named presets that reproduce each public library's default so a number
 * can be compared with the library an operator knows.
 */
export const EQUAL_WIDTH_15: BinningSpec = { scheme: 'equal-width', bins: 15, edgeRule: 'left-closed' };
export const EQUAL_MASS_15: BinningSpec = {
  scheme: 'equal-mass',
  bins: 15,
  massEdges: 'midpoint',
  edgeRule: 'right-closed',
};

export interface MetricSuiteOptions {
  /** Binnings for the binned metrics (default: 15 equal-width and 15 equal-mass bins). */
  binnings?: BinningSpec[];
  /** MMCE is O(n^2) (subsampled above 20,000): off unless asked for. */
  includeMmce?: boolean;
  /** TCE runs one exact binomial test per distinct prediction (about 5 us each): off unless asked for. */
  includeTce?: boolean;
  seed?: number;
}

export function metricSuite(scores: ClassScores, options: MetricSuiteOptions = {}): MetricValue[] {
  const top = topLabelScores(scores);
  const binnings = options.binnings ?? [EQUAL_WIDTH_15, EQUAL_MASS_15];
  const out: MetricValue[] = [
    accuracy(top),
    negativeLogLikelihood(scores),
    multiclassBrier(scores),
    topLabelBrier(top),
  ];
  const columns = classColumns(scores);
  for (const requested of binnings) {
    // Fewer samples than equal-mass bins: one sample per bin (as uncertainty-calibration does);
    // the identity then states the bin count actually used.
    const spec =
      requested.scheme === 'equal-mass'
        ? { ...requested, bins: Math.min(requested.bins, scores.sampleCount) }
        : requested;
    out.push(
      ...topLabelBinnedMetrics(top, spec),
      ...classwiseMetrics(scores, spec, columns),
      ...topLabelPerClassMetrics(top, scores.classCount, spec),
    );
    // its asymptotic interval conditions on the bins, so only fixed (equal-width) ones
    if (spec.scheme === 'equal-width') out.push(l2CeUStatisticMetric(top.confidence, top.correct, spec));
  }
  out.push(smoothEce(top.confidence, top.correct).value);
  const ranked = rankOutcomes(top.confidence, top.correct);
  const roc = auroc(top, ranked);
  if (roc !== null) out.push(roc);
  out.push(...selectiveRisk(top, ranked));
  const tests = cumulativeCalibrationTests(top.confidence, top.correct, 'top-label', ranked);
  if (tests !== null) out.push(...Object.values(tests).filter((m): m is MetricValue => m !== null));
  if (options.includeMmce) out.push(mmce(top.confidence, top.correct, options.seed ?? 0));
  if (options.includeTce && top.confidence.length > 10) {
    out.push(tceMetric(testBasedCalibrationError(top.confidence, top.correct)));
  }
  return out;
}

export const PRESET_NAMES = [
  'torchmetrics-15',
  'netcal-10',
  'kumar-debiased-l2-15',
  'smooth-ece',
  'sklearn-curve-10',
] as const;
export type PresetName = (typeof PRESET_NAMES)[number];

/**
 * - torchmetrics-15: multiclass calibration error, 15 equal-width bins, 1.0 in an extra bin, L1;
 * - netcal-10: netcal ECE default, 10 equal-width bins, numpy histogram edges ([lo,hi), last closed);
 * - kumar-debiased-l2-15: uncertainty-calibration's default, 15 equal-mass bins, debiased l2
 *   (top-label and marginal);
 * - smooth-ece: relplot's smECE with automatic bandwidth;
 * - sklearn-curve-10: sklearn calibration_curve(n_bins=10) bins ((lo,hi], first closed), as ECE.
 */
export function presetMetrics(
  preset: PresetName,
  scores: ClassScores,
  top: TopLabelScores = topLabelScores(scores),
): MetricValue[] {
  const tag = (values: MetricValue[]): MetricValue[] =>
    values.map((v) => ({ ...v, identity: `${v.identity} [preset ${preset}]` }));
  switch (preset) {
    case 'torchmetrics-15':
      return tag(
        topLabelBinnedMetrics(top, { scheme: 'equal-width', bins: 15, edgeRule: 'one-in-extra-bin' }).filter((m) =>
          ['ECE', 'MCE', 'RMSCE'].includes(m.name),
        ),
      );
    case 'netcal-10':
      return tag(
        topLabelBinnedMetrics(top, { scheme: 'equal-width', bins: 10, edgeRule: 'left-closed' }).filter((m) =>
          ['ECE', 'MCE', 'ACE (netcal)'].includes(m.name),
        ),
      );
    case 'kumar-debiased-l2-15':
      return tag([
        ...topLabelBinnedMetrics(top, EQUAL_MASS_15).filter((m) => m.name === 'debiased L2-CE'),
        ...classwiseMetrics(scores, EQUAL_MASS_15).filter((m) => m.name === 'marginal debiased L2-CE'),
      ]);
    case 'smooth-ece':
      return tag([smoothEce(top.confidence, top.correct).value]);
    case 'sklearn-curve-10':
      return tag(
        topLabelBinnedMetrics(top, { scheme: 'equal-width', bins: 10, edgeRule: 'right-closed' }).filter(
          (m) => m.name === 'ECE',
        ),
      );
  }
}
