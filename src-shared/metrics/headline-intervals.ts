import { binnedStatistics } from './column-statistics';
import { eachResample, percentileInterval, type BootstrapInterval, type BootstrapOptions } from './bootstrap';
import { expectedCalibrationError } from './calibration-error';
import { COUNTED_FROM_VALUES, drawCounts } from './draw-counts';
import { fixedBinResampler } from './fixed-bin-resamples';
import { EQUAL_WIDTH_15 } from './metric-suite';
import {
  biasCorrectedBasicInterval,
  containingPercentile,
  proportionInterval,
  type FigureInterval,
} from './interval-variants';
import { methodWithNote } from './metric-format';
import { NLL_FROM_LOGITS, sampleBrierOfRow, sampleNllFromLogits } from './proper-scores';
import type { ClassScores, TopLabelScores } from './scores';

/**
 * The figures decisions are made on (accuracy, NLL, Brier, ECE at 15 equal-width bins), as
 * statistics of a resample, so that every interval of them comes from one place:
 * - headlineFigures / meanOverGroups: each figure with its seeded percentile-bootstrap interval
 *   (stratified by group when a figure is a mean over conditions);
 * - paired-differences.ts builds A/B on the same frames on these statistics and stratifiedDraws:
 *   each replicate draws one resample of frame indices and evaluates both A and B on it (the
 *   pairing removes the frame-to-frame variation the two share); the interval is that of B - A, and
 *   the verdict says whether B is better, worse, or indistinguishable from A at the level.
 * Each resample's figures are the estimator's on the resampled frames (fixed bins: the same exact
 * bin sums from the draws counted; equal-mass bins: binned again), so an interval covers the
 * estimator as computed.
 * Percentiles interpolate linearly between order statistics (numpy's 'linear').
 * A figure's own interval (headlineFigures, meanOverGroups, bootstrapIntervalsOf) follows its
 * statistic's `interval` (interval-variants.ts): accuracy the Wilson score interval, binned ECE the
 * bias-corrected basic bootstrap, the rest the percentile bootstrap; each contains its estimate,
 * or is widened to it and says why (`note`).
 */
export interface HeadlineStatistic {
  name: string;
  /** The identity of the value it is an interval of (as the metric suite names it). */
  identity: string;
  lowerIsBetter: boolean;
  /** The statistic on the resample given by `indices` (all samples, in order, when null). */
  evaluate(indices: Uint32Array | null): number;
  /**
   * The figure's own interval: 'wilson' for a proportion (a mean of 0/1 values), 'bias-corrected'
   * for an estimator >= 0 biased upward (binned ECE); absent: the percentile bootstrap.
   */
  interval?: 'wilson' | 'bias-corrected';
}

/** The mean of per-sample values as a resample statistic (a rate, a mean score). */
export function meanStatistic(
  name: string,
  identity: string,
  values: ArrayLike<number>,
  lowerIsBetter: boolean,
): HeadlineStatistic {
  return { name, identity, lowerIsBetter, evaluate: meanOver(values) };
}

function meanOver(values: ArrayLike<number>): (indices: Uint32Array | null) => number {
  return (indices) => {
    let sum = 0;
    if (indices === null) {
      for (let i = 0; i < values.length; i++) sum += values[i];
      return sum / values.length;
    }
    if (values.length < COUNTED_FROM_VALUES) {
      for (let i = 0; i < indices.length; i++) sum += values[indices[i]!]!;
      return sum / indices.length;
    }
    // the replicate's draw counts (shared by its statistics, draw-counts.ts) read in order: a sum
    // of count x value instead of a gather at every draw's random place. A value left out is not
    // read: 0 x an infinite NLL (a true class given probability 0) would be NaN.
    const counts = drawCounts(indices, values.length);
    for (let i = 0; i < counts.length; i++) {
      const count = counts[i]!;
      if (count !== 0) sum += count * values[i]!;
    }
    return sum / indices.length;
  };
}

export const ECE_15_IDENTITY = 'ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)';

/** Accuracy, NLL, Brier and ECE (15 equal-width) of one set of scores, as resample statistics. */
export function headlineStatistics(scores: ClassScores, top: TopLabelScores): HeadlineStatistic[] {
  const n = scores.sampleCount;
  const k = scores.classCount;
  // the row pass's per-sample terms when it made them (read, never written), else from the rows
  const nll = scores.sampleNll ?? new Float64Array(n);
  const brier = scores.sampleBrier ?? new Float64Array(n);
  if (scores.sampleNll === null || scores.sampleBrier === null)
    for (let i = 0; i < n; i++) {
      const y = scores.labels[i];
      if (scores.sampleNll === null)
        nll[i] =
          scores.logits !== null
            ? sampleNllFromLogits(scores.logits, k, i, y)
            : -Math.log(scores.probabilities[i * k + y]);
      if (scores.sampleBrier === null) brier[i] = sampleBrierOfRow(scores.probabilities, i * k, k, y);
    }
  const ece = ece15OfResample(top);
  return [
    {
      name: 'accuracy',
      identity: 'accuracy(top-1)',
      lowerIsBetter: false,
      evaluate: meanOver(top.correct),
      interval: 'wilson',
    },
    {
      name: 'NLL',
      identity:
        scores.sampleNll !== null || scores.logits !== null
          ? NLL_FROM_LOGITS
          : 'NLL(multiclass, from probabilities, natural log, mean, unclipped)',
      lowerIsBetter: true,
      evaluate: meanOver(nll),
    },
    {
      name: 'Brier',
      identity: 'Brier(multiclass, sum over classes, mean over samples, range [0, 2])',
      lowerIsBetter: true,
      evaluate: meanOver(brier),
    },
    { name: 'ECE', identity: ECE_15_IDENTITY, lowerIsBetter: true, evaluate: ece, interval: 'bias-corrected' },
  ];
}

/**
 * ECE at 15 equal-width bins of top-label pairs, on all of them (null) or on a resample. The bins
 * are fixed, so a resample counts its draws of each pair instead of binning its values again (the
 * same statistics, exactly; fixed-bin-resamples.ts).
 */
export function ece15OfResample(
  top: Pick<TopLabelScores, 'confidence' | 'correct'>,
): (indices: Uint32Array | null) => number {
  const resampler = fixedBinResampler(top.confidence, top.correct, EQUAL_WIDTH_15);
  return (indices) =>
    expectedCalibrationError(
      indices === null ? binnedStatistics(top.confidence, top.correct, EQUAL_WIDTH_15) : resampler.statistics(indices),
    );
}

/** How a figure is resampled: the bootstrap's options (bootstrap.ts). */
export type ResamplingOptions = BootstrapOptions;

/**
 * A group of samples resampled within itself: a corruption x severity condition of a table, or the
 * one group of a plain bootstrap. `weight` says how its statistics enter the combined figure: 1/S
 * for a mean over S conditions, +1 and -1 for a difference of two independent groups.
 */
export interface Stratum {
  sampleCount: number;
  weight: number;
  /** The j-th statistic of this group on a resample of it (all samples when null). */
  evaluate(statistic: number, indices: Uint32Array | null): number;
}

/**
 * Stratified percentile bootstrap: each replicate resamples every stratum within itself (stratum s
 * draws from seed + s, so a single stratum draws exactly the plain bootstrap's resamples) and
 * combines each statistic as the weighted sum over strata. Returns each statistic's combined value
 * on all samples and its draws (one per replicate).
 */
export function stratifiedDraws(
  strata: Stratum[],
  statisticCount: number,
  options: ResamplingOptions,
): Array<{ value: number; draws: Float64Array }> {
  const replicates = options.replicates ?? 200;
  const values = combinedValues(strata, statisticCount);
  const out = values.map((value) => ({ value, draws: new Float64Array(replicates) }));
  strata.forEach((stratum, s) => {
    eachResample(stratum.sampleCount, { ...options, seed: (options.seed ?? 0) + s }, (indices, r) => {
      for (let j = 0; j < statisticCount; j++) out[j].draws[r] += stratum.weight * stratum.evaluate(j, indices);
    });
  });
  return out;
}

/** Each statistic combined over strata on all their samples: the weighted sum, in stratum order. */
function combinedValues(strata: Stratum[], statisticCount: number): number[] {
  return Array.from({ length: statisticCount }, (_, j) =>
    strata.reduce((sum, stratum) => sum + stratum.weight * stratum.evaluate(j, null), 0),
  );
}

/** A combined statistic (a weighted sum over strata) with its stratified percentile interval. */
export interface StratifiedFigure {
  value: number;
  lo: number;
  hi: number;
  method: string;
}

/** One statistic (index 0 of each stratum) combined over strata, with its interval. */
export function stratifiedFigure(strata: Stratum[], options: ResamplingOptions = {}): StratifiedFigure {
  const [combined] = stratifiedDraws(strata, 1, options);
  const i = percentileInterval(
    combined.draws,
    options,
    strata.length > 1 ? `stratified (${strata.length} groups) ` : '',
  );
  const contained = containingPercentile(combined.value, i.lo, i.hi, i.identity);
  return {
    value: combined.value,
    lo: contained.lo,
    hi: contained.hi,
    method: methodWithNote(i.identity, contained.note),
  };
}

/** One group's statistics as a stratum (weight 1). */
function soleStratum(statistics: HeadlineStatistic[], sampleCount: number): Stratum {
  return { sampleCount, weight: 1, evaluate: (j, indices) => statistics[j].evaluate(indices) };
}

/**
 * The interval of one statistic combined over strata (its value and resampled draws), by the
 * statistic's own variant (`HeadlineStatistic.interval`).
 */
function figureInterval(
  statistic: HeadlineStatistic,
  combined: { value: number; draws: Float64Array },
  strata: Stratum[],
  options: ResamplingOptions,
  what: string,
): FigureInterval {
  const level = options.level ?? 0.95;
  const resampling = `${what}${options.replicates ?? 200} resamples, seed ${options.seed ?? 0}`;
  if (statistic.interval === 'wilson' && combined.value >= 0 && combined.value <= 1) {
    // Kish's effective sample size of a weighted mean of proportions: n itself for one group
    const effective = 1 / strata.reduce((sum, s) => sum + (s.weight * s.weight) / s.sampleCount, 0);
    return proportionInterval(
      combined.value,
      strata.length === 1 ? strata[0].sampleCount : effective,
      level,
      strata.length,
    );
  }
  if (statistic.interval === 'bias-corrected' && combined.value >= 0)
    return biasCorrectedBasicInterval(combined.value, combined.draws, level, resampling);
  const i = percentileInterval(combined.draws, options, what);
  return containingPercentile(combined.value, i.lo, i.hi, i.identity);
}

/** A statistic's interval as the snapshot keys them: a bootstrap interval's fields, and `note`. */
export interface KeyedInterval extends BootstrapInterval {
  note?: string;
}

/** Each statistic's own interval (figureInterval), keyed by the identity of its value. */
export function bootstrapIntervalsOf(
  statistics: HeadlineStatistic[],
  sampleCount: number,
  options: ResamplingOptions = {},
): Record<string, KeyedInterval> {
  const strata = [soleStratum(statistics, sampleCount)];
  const combined = stratifiedDraws(strata, statistics.length, options);
  return Object.fromEntries(
    statistics.map((s, j) => {
      const i = figureInterval(s, combined[j], strata, options, '');
      const keyed: KeyedInterval = {
        lo: i.lo,
        hi: i.hi,
        level: options.level ?? 0.95,
        replicates: options.replicates ?? 200,
        seed: options.seed ?? 0,
        identity: i.method,
      };
      return [s.identity, i.note === undefined ? keyed : { ...keyed, note: i.note }];
    }),
  );
}

/** One headline figure with its interval. */
export interface HeadlineFigure {
  name: string;
  identity: string;
  value: number;
  lo: number;
  hi: number;
  /** How the interval was made (level, method, resamples, seed): each figure its own. */
  method: string;
  /** Set when the interval had to be widened to contain the value, saying why. */
  note?: string;
}

/**
 * Accuracy, NLL, Brier and ECE with their intervals: what `knob metrics --intervals`, `knob run`'s
 * metrics.json and report, and the desk's calibration panel state.
 */
export function headlineFigures(
  scores: ClassScores,
  top: TopLabelScores,
  options: ResamplingOptions = {},
): HeadlineFigure[] {
  return meanOverGroups([headlineStatistics(scores, top)], [scores.sampleCount], options);
}

/**
 * Each statistic's mean over groups (conditions), with its interval from a stratified bootstrap
 * (every group resampled within itself) or, for a proportion, Wilson's with Kish's effective n:
 * the figures of a table that averages over conditions. The groups' statistic lists are in the
 * same order.
 */
export function meanOverGroups(
  groups: HeadlineStatistic[][],
  sampleCounts: number[],
  options: ResamplingOptions = {},
): HeadlineFigure[] {
  const strata = groupStrata(groups, sampleCounts);
  const combined = stratifiedDraws(strata, groups[0].length, options);
  const what = groups.length > 1 ? `stratified (${groups.length} groups) ` : '';
  return groups[0].map((s, j) => {
    const i = figureInterval(s, combined[j], strata, options, what);
    const figure = {
      name: s.name,
      identity: s.identity,
      value: combined[j].value,
      lo: i.lo,
      hi: i.hi,
      method: i.method,
    };
    return i.note === undefined ? figure : { ...figure, note: i.note };
  });
}

/**
 * meanOverGroups' values alone (no resampling): what a table shows without intervals is the same
 * number, to the bit, that its intervals are built around and contain.
 */
export function meanValuesOverGroups(groups: HeadlineStatistic[][]): number[] {
  return meanOfGroupValues(groups.map((statistics) => statistics.map((s) => s.evaluate(null))));
}

/**
 * meanValuesOverGroups of statistics already evaluated (values[g][j]: group g's statistic j),
 * combined by combinedValues as the groups' strata are (the same bits), for a caller that keeps
 * the values and not the statistics' per-frame arrays.
 */
export function meanOfGroupValues(values: number[][]): number[] {
  const weight = 1 / values.length;
  const strata = values.map((group) => ({ sampleCount: 0, weight, evaluate: (j: number) => group[j]! }));
  return combinedValues(strata, values[0]!.length);
}

/** Each group a stratum of equal weight (a mean over groups). */
function groupStrata(groups: HeadlineStatistic[][], sampleCounts: number[]): Stratum[] {
  const weight = 1 / groups.length;
  return groups.map((statistics, g) => ({ ...soleStratum(statistics, sampleCounts[g]), weight }));
}
