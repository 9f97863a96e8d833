import type { MetricValue } from './metric-value';

/**
 * The same metrics broken down by a per-sample key (corruption, severity, gate bucket, predicted
 * class): `compute` receives the indices of one group and returns its metrics.
 */
export interface MetricGroup {
  key: string;
  count: number;
  metrics: MetricValue[];
}

export function groupedMetrics(
  keys: ArrayLike<number>,
  keyNames: (code: number) => string,
  compute: (indices: Uint32Array) => MetricValue[],
): MetricGroup[] {
  const members = new Map<number, number[]>();
  for (let i = 0; i < keys.length; i++) {
    const list = members.get(keys[i]);
    if (list) list.push(i);
    else members.set(keys[i], [i]);
  }
  return [...members.entries()]
    .sort(([a], [b]) => a - b)
    .map(([code, list]) => ({ key: keyNames(code), count: list.length, metrics: compute(Uint32Array.from(list)) }));
}

/** Gate buckets for grouping: terciles or any equal-width split of g in [0, 1]. */
export function gateBuckets(g: Float64Array, buckets = 3): Int32Array {
  const out = new Int32Array(g.length);
  for (let i = 0; i < g.length; i++) out[i] = Math.min(buckets - 1, Math.max(0, Math.floor(g[i] * buckets)));
  return out;
}
