import type { AlarmStatistic } from './alarm-statistic';
import { TwoSidedCusum } from './cusum';
import { WindowKs } from './window-ks';

/** How a pair's statistic is made from its reference: plain data, so a thread can make it too. */
export type StatisticSpec =
  { detector: 'cusum' } | { detector: 'window-ks'; windowFrames: number; strideFrames: number; bins: number };

/**
 * The detector fitted to a reference: its mean and sd, or its quantile edges (from
 * `sortedReference`, the reference in ascending order, when the caller has it).
 */
export function makeStatistic(
  spec: StatisticSpec,
  reference: Float64Array,
  sortedReference?: Float64Array,
): AlarmStatistic {
  if (spec.detector === 'window-ks')
    return new WindowKs(reference, spec.windowFrames, spec.strideFrames, spec.bins, sortedReference);
  const { mean, sd } = meanAndSd(reference);
  // a simulated reference can come out constant where the real one was not: a tiny sd, then
  return new TwoSidedCusum(mean, sd > 0 ? sd : Number.MIN_VALUE);
}

/** The mean and the sample standard deviation (n - 1) of a reference. */
export function meanAndSd(values: Float64Array): { mean: number; sd: number } {
  let mean = 0;
  for (let i = 0; i < values.length; i++) mean += values[i]!;
  mean /= values.length;
  let squares = 0;
  for (let i = 0; i < values.length; i++) squares += (values[i]! - mean) ** 2;
  return { mean, sd: Math.sqrt(squares / (values.length - 1)) };
}
