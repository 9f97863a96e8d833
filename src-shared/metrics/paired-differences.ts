import { percentileInterval, type BootstrapInterval } from './bootstrap';
import { containingPercentile } from './interval-variants';
import {
  meanValuesOverGroups,
  stratifiedDraws,
  type HeadlineStatistic,
  type ResamplingOptions,
  type Stratum,
} from './headline-intervals';

/**
 * B against A with bootstrap intervals of the difference: on the same frames (paired, the same
 * resamples for both), over groups of frames (paired and stratified), or on two recordings
 * (independent), each with its verdict at the interval's level.
 */
export type Verdict = 'better' | 'worse' | 'indistinguishable';

export interface PairedDifference {
  name: string;
  identity: string;
  a: number;
  b: number;
  /** b - a on all frames. */
  difference: number;
  interval: BootstrapInterval;
  lowerIsBetter: boolean;
  /** B against A: better when the interval of b - a lies wholly on the better side of 0. */
  verdict: Verdict;
  /** Set when the interval was widened to contain the difference, saying why (containedDifference). */
  note?: string;
}

/**
 * B against A on the same frames: for each statistic (A's and B's lists in the same order), the
 * difference b - a, its paired percentile-bootstrap interval (same resamples for both), and the
 * verdict at the interval's level.
 */
export function pairedDifferences(
  a: HeadlineStatistic[],
  b: HeadlineStatistic[],
  sampleCount: number,
  options: ResamplingOptions = {},
): PairedDifference[] {
  return pairedDifferencesOverGroups([a], [b], [sampleCount], options);
}

/**
 * B against A over groups of frames (conditions): the mean over groups of b - a, each group
 * resampled within itself and A and B evaluated on the same resample (paired and stratified).
 * With one group this is `pairedDifferences`.
 */
export function pairedDifferencesOverGroups(
  a: HeadlineStatistic[][],
  b: HeadlineStatistic[][],
  sampleCounts: number[],
  options: ResamplingOptions = {},
): PairedDifference[] {
  return pairedDifferencesFromParts(a[0], pairedDifferenceParts(a, b, sampleCounts, options), a.length, options);
}

/**
 * What a paired difference is made from: each statistic's value for A and B and b - a on all
 * frames, and b - a on each replicate the bootstrap made (0 on those outside
 * `options.replicateRange`: threads that share a bootstrap each make a range, each the same draws
 * as in the whole run).
 */
export interface PairedDifferenceParts {
  a: number[];
  b: number[];
  difference: number[];
  draws: Float64Array[];
}

export function pairedDifferenceParts(
  a: HeadlineStatistic[][],
  b: HeadlineStatistic[][],
  sampleCounts: number[],
  options: ResamplingOptions = {},
): PairedDifferenceParts {
  const weight = 1 / a.length;
  const difference = (g: number) => (j: number, indices: Uint32Array | null) =>
    b[g][j].evaluate(indices) - a[g][j].evaluate(indices);
  const strata = a.map((_, g) => ({ sampleCount: sampleCounts[g], weight, evaluate: difference(g) }));
  const combined = stratifiedDraws(strata, a[0].length, { ...options, replicates: options.replicates ?? 1000 });
  return {
    a: meanValuesOverGroups(a),
    b: meanValuesOverGroups(b),
    difference: combined.map((c) => c.value),
    draws: combined.map((c) => c.draws),
  };
}

/**
 * Parts made over disjoint replicate ranges (one a thread), put together: each range's draws from
 * the part that made them, the values (the same in every part) from the first.
 */
export function partsOverRanges(
  parts: PairedDifferenceParts[],
  ranges: ReadonlyArray<{ from: number; to: number }>,
  replicates: number,
): PairedDifferenceParts {
  const draws = parts[0]!.draws.map((_, j) => {
    const merged = new Float64Array(replicates);
    parts.forEach((part, t) => merged.set(part.draws[j]!.subarray(ranges[t]!.from, ranges[t]!.to), ranges[t]!.from));
    return merged;
  });
  return { ...parts[0]!, draws };
}

/** The paired differences over `groups` groups from their parts, every replicate's draw in them. */
export function pairedDifferencesFromParts(
  statistics: ReadonlyArray<Pick<HeadlineStatistic, 'name' | 'identity' | 'lowerIsBetter'>>,
  parts: PairedDifferenceParts,
  groups: number,
  options: ResamplingOptions = {},
): PairedDifference[] {
  const resampling = { ...options, replicates: options.replicates ?? 1000 };
  const what = groups > 1 ? `paired stratified (${groups} groups) ` : 'paired ';
  return statistics.map((statistic, j) => {
    const { ci, note } = containedDifference(percentileInterval(parts.draws[j], resampling, what), parts.difference[j]);
    return {
      name: statistic.name,
      identity: statistic.identity,
      a: parts.a[j],
      b: parts.b[j],
      difference: parts.difference[j],
      interval: ci,
      lowerIsBetter: statistic.lowerIsBetter,
      verdict: verdictOf(ci, statistic.lowerIsBetter, parts.a[j], parts.b[j]),
      ...(note === undefined ? {} : { note }),
    };
  });
}

/**
 * The percentile interval of b - a widened to contain the difference itself where the resampling
 * distribution lies wholly to one side of it (a biased estimator's, as ECE's), and the note saying
 * so: the verdict is read from an interval that never leaves out the difference shown with it. The
 * identity stays the method's (every row of a comparison shares it).
 */
function containedDifference(ci: BootstrapInterval, difference: number): { ci: BootstrapInterval; note?: string } {
  const widened = containingPercentile(difference, ci.lo, ci.hi, ci.identity);
  return widened.note === undefined ? { ci } : { ci: { ...ci, lo: widened.lo, hi: widened.hi }, note: widened.note };
}

/**
 * Differences this close to 0, relative to the figures (at least 1), are no difference: two
 * settings whose fused outputs are equal but for float64 rounding (branches that agree, a gate
 * that moves nothing) differ by ~1e-16 on every resample, an interval that excludes 0 and means
 * nothing. The tie sits far above such rounding and far below anything the app displays (four
 * decimals), so it decides nothing a reader could see.
 */
const ROUNDING_TIE = 1e-12;

/**
 * B against A at the interval's level: better when the interval of b - a excludes 0 on the better
 * side, indistinguishable when it lies within rounding of 0 (ROUNDING_TIE).
 */
function verdictOf(ci: BootstrapInterval, lowerIsBetter: boolean, a: number, b: number): Verdict {
  const tie = ROUNDING_TIE * Math.max(1, Math.abs(a), Math.abs(b));
  if (Math.abs(ci.lo) <= tie && Math.abs(ci.hi) <= tie) return 'indistinguishable';
  const better = lowerIsBetter ? ci.hi < 0 : ci.lo > 0;
  const worse = lowerIsBetter ? ci.lo > 0 : ci.hi < 0;
  return better ? 'better' : worse ? 'worse' : 'indistinguishable';
}

/**
 * B against A on different frames (two recordings): b - a with an interval from resampling each
 * recording on its own (A from seed, B from seed + 1), and the verdict. Wider than a paired
 * interval: nothing the two share cancels.
 */
export function independentDifferences(
  a: HeadlineStatistic[],
  b: HeadlineStatistic[],
  sampleCounts: { a: number; b: number },
  options: ResamplingOptions = {},
): PairedDifference[] {
  const replicates = options.replicates ?? 1000;
  const resampling = { ...options, replicates };
  const strata: Stratum[] = [
    { sampleCount: sampleCounts.a, weight: -1, evaluate: (j, indices) => a[j].evaluate(indices) },
    { sampleCount: sampleCounts.b, weight: 1, evaluate: (j, indices) => b[j].evaluate(indices) },
  ];
  const combined = stratifiedDraws(strata, a.length, resampling);
  return a.map((statistic, j) => {
    const { ci, note } = containedDifference(
      percentileInterval(combined[j].draws, resampling, 'independent (two recordings) '),
      combined[j].value,
    );
    const [valueA, valueB] = [statistic.evaluate(null), b[j].evaluate(null)];
    return {
      name: statistic.name,
      identity: statistic.identity,
      a: valueA,
      b: valueB,
      difference: combined[j].value,
      interval: ci,
      lowerIsBetter: statistic.lowerIsBetter,
      verdict: verdictOf(ci, statistic.lowerIsBetter, valueA, valueB),
      ...(note === undefined ? {} : { note }),
    };
  });
}
