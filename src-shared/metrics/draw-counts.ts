/**
 * Below this many values the arrays a resample reads fit in the caches, and a gather at each draw
 * costs less than counting the draws and a pass over every value (a paired bootstrap of 20,000
 * frames took 11 % longer counted, one of 324,000 draws 1.45 x less): the statistics gather there.
 */
export const COUNTED_FROM_VALUES = 65_536;

/**
 * How many times a resample draws each value: what a statistic that is a sum over the values
 * (fixed-bin statistics, fixed-bin-resamples.ts) needs of a resample, read in order instead of at
 * the draws' random places. One replicate's counts serve every statistic evaluated on it: the two
 * settings of a paired difference, every class of a classwise ECE (issue 29).
 *
 * The memo is keyed by the indices array eachResample (bootstrap.ts) fills and hands out, and
 * eachResample marks it stale before each replicate's statistics run; indices from anywhere else
 * are counted afresh at every call.
 */
const memo = new WeakMap<Uint32Array, { counts: Int32Array | null; current: boolean }>();

/** Called by eachResample once it has filled `indices` with a new replicate's draws. */
export function markNewResample(indices: Uint32Array): void {
  const entry = memo.get(indices);
  if (entry === undefined) memo.set(indices, { counts: null, current: false });
  else entry.current = false;
}

/**
 * counts[i] = the number of j with indices[j] = i, for i < valueCount (every index is below it).
 * `scratch` (valueCount long) is used for indices eachResample did not hand out.
 */
export function drawCounts(indices: Uint32Array, valueCount: number, scratch?: Int32Array): Int32Array {
  const entry = memo.get(indices);
  if (entry !== undefined && entry.current && entry.counts !== null && entry.counts.length === valueCount)
    return entry.counts;
  let counts: Int32Array;
  if (entry !== undefined) {
    counts = entry.counts !== null && entry.counts.length === valueCount ? entry.counts : new Int32Array(valueCount);
    entry.counts = counts;
    entry.current = true;
  } else counts = scratch !== undefined && scratch.length === valueCount ? scratch : new Int32Array(valueCount);
  counts.fill(0);
  for (let j = 0; j < indices.length; j++) {
    const i = indices[j]!;
    // a typed array drops a write past its end: an index past the values would go uncounted
    if (i >= valueCount) throw new Error(`draw ${j} is value ${i} of ${valueCount}`);
    counts[i]!++;
  }
  return counts;
}
