import type { MetricGrouping } from '../../../src-shared/api/metrics-schemas';
import { gateBuckets } from '../../../src-shared/metrics/grouped';
import type { Replayed } from './view-replay';

/**
 * The group each labelled frame of a view belongs to, and the groups' names (the calibration
 * figures and the prediction sets break their frames down alike): severity or corruption from the
 * trace's metadata, the predicted class, or a third of the gate's range. 'none' is the caller's
 * to handle (no breakdown).
 */
export function groupKeys(
  run: Replayed,
  groupBy: MetricGrouping,
): { keys: Int32Array; name: (code: number) => string } {
  const { trace, frames, output, top } = run;
  const keys = new Int32Array(frames.length);
  if (groupBy === 'severity' || groupBy === 'corruption') {
    const column = trace.metadata[groupBy];
    if (column?.kind === 'category') {
      frames.forEach((f, j) => (keys[j] = column.codes[f]));
      return { keys, name: (code) => column.dictionary[code] ?? String(code) };
    }
    if (column?.kind === 'number') {
      frames.forEach((f, j) => (keys[j] = column.values[f]));
      return { keys, name: (code) => `severity ${code}` };
    }
    // a recording without the column: one group, named for what it lacks
    return { keys, name: () => `no ${groupBy} recorded` };
  }
  if (groupBy === 'predicted-class') {
    frames.forEach((_, j) => (keys[j] = top!.predicted[j]));
    return { keys, name: (code) => trace.labelNames[code] ?? String(code) };
  }
  const buckets = gateBuckets(output.g, 3);
  frames.forEach((f, j) => (keys[j] = buckets[f]));
  return { keys, name: (code) => ['g in [0, 1/3)', 'g in [1/3, 2/3)', 'g in [2/3, 1]'][code] ?? String(code) };
}
