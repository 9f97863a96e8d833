import { percentileOfSorted, sortNonNegative } from './order-statistics';

/**
 * Latency figures of a run: p50, p95, p99, mean and max of non-negative durations in milliseconds.
 * Percentiles interpolate linearly between order statistics (numpy.percentile's default 'linear':
 * rank q (n - 1)), so they can be checked against numpy on the same samples.
 */
export interface LatencySummary {
  count: number;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Summary of the first `count` samples; null when there are none (never a NaN figure). */
export function latencySummary(samplesMs: Float64Array, count = samplesMs.length): LatencySummary | null {
  if (count === 0) return null;
  const sorted = sortNonNegative(samplesMs.subarray(0, count));
  let sum = 0;
  for (let i = 0; i < count; i++) sum += sorted[i];
  return {
    count,
    meanMs: sum / count,
    p50Ms: percentileOfSorted(sorted, 0.5),
    p95Ms: percentileOfSorted(sorted, 0.95),
    p99Ms: percentileOfSorted(sorted, 0.99),
    maxMs: sorted[count - 1],
  };
}
