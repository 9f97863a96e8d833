/**
 * Searches of a non-decreasing step function of a real parameter (a mean run length as the
 * thresholds rise: path-records.ts) and of a monotone predicate over indices.
 */

/**
 * A q in [lo, hi] at which the non-decreasing `mean` is at least `wanted`, within (hi - lo) / 2^32
 * of the least such q (Infinity when even hi falls short), by halving the bracket: a bound for
 * stopping paths, so closer would only save a path a few frames, at a search over every path a step.
 */
export function bisectParameter(mean: (q: number) => number, wanted: number, lo: number, hi: number): number {
  if (!(hi >= lo) || mean(hi) < wanted) return Infinity;
  if (mean(lo) >= wanted) return lo;
  for (let i = 0; i < 32 && hi > lo; i++) {
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    if (mean(mid) >= wanted) hi = mid;
    else lo = mid;
  }
  return hi;
}

/**
 * A q in [lo, hi) at which the non-decreasing `mean` falls short of `wanted`, as close below the
 * least q that reaches it as 48 halvings of the bracket get (-Infinity when even lo reaches it, or
 * the bracket is empty or unbounded): the answer's candidates lie above it, so only those need
 * their inverses taken.
 */
export function shortOfTarget(mean: (q: number) => number, wanted: number, lo: number, hi: number): number {
  if (!(Number.isFinite(lo) && Number.isFinite(hi) && hi > lo) || mean(lo) >= wanted) return -Infinity;
  for (let i = 0; i < 48; i++) {
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    if (mean(mid) >= wanted) hi = mid;
    else lo = mid;
  }
  return lo;
}

/** The first i in [0, length) at which the monotone `holds` is true (length when it never is). */
export function firstIndexWhere(length: number, holds: (i: number) => boolean): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (holds(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
