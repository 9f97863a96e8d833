import {
  brownianMaxAbsCdf,
  brownianRangeCdf,
  cumulativeCalibrationTests,
  normalTwoSidedPValue,
} from './cumulative-tests';
import type { KeptClassFrameBounds } from './kept-class-bounds';
import type { TopLabelScores } from './scores';

/**
 * Stated bounds of the calibration tests (cumulative-tests.ts) of a kept-class trace against its
 * full trace. Each frame's full confidence lies in [lo_i, hi_i] with its correctness y_i the
 * estimate's (a settled frame), or anywhere in [0, 1], right or wrong (U unsettled frames).
 * - Cumulative differences A(t) = sum_{c_i <= t} (y_i - c_i), so C = A / n and the KS statistic is
 *   max_t |A(t)| / sqrt(V), V = sum c (1 - c), the Kuiper statistic (max A - min A) / sqrt(V). At a
 *   threshold t a frame is in both sums when hi_i <= t (its term moves by d_i = hi_i - lo_i, or by
 *   2 unsettled), in neither when t < lo_i, and otherwise in one or both (a move of at most 1, or 2
 *   unsettled); so |A(t) - A'(t)| <= E = max_t #{lo_i <= t < hi_i, settled} + sum d_i + 2 U, and
 *   max |A| moves by at most E, max A - min A by at most 2 E. V lies in [V_lo, V_hi], the sums of
 *   each frame's range of c (1 - c) (concave: its ends, or 1/4 where the range holds 1/2).
 * - Spiegelhalter's Z = N / sqrt(W), N = sum (y - c)(1 - 2c), W = sum (1 - 2c)^2 c (1 - c): each
 *   frame's range of its N term (convex in c, least at c = (2 y + 1) / 4) and of its W term
 *   (u (1 - 4 u) with u = c (1 - c), largest at u = 1/8) give N in [N_lo, N_hi], W in [W_lo, W_hi];
 *   an unsettled frame's terms lie in [-1/8, 1] and [0, 1/16].
 * Each statistic's range follows, and each P-value's from it (both decrease with the statistic,
 * Spiegelhalter's with |Z|); the bound is the farther end from the estimate. Where V_lo or W_lo
 * is 0 the full trace may have no test: the statistic's bound is Infinity, its P-value's the whole
 * of [0, 1] from the estimate. Sums are widened by SUM_ROUNDING per frame for
 * the rounding of both traces' passes.
 */
export interface TestBounds {
  ks: number;
  ksPValue: number;
  kuiper: number;
  kuiperPValue: number;
  spiegelhalterZ: number;
  spiegelhalterPValue: number;
}

/** Absolute widening of each sum, per frame it adds (terms are at most 1, rounded at 2.2e-16). */
const SUM_ROUNDING = 1e-13;

export function calibrationTestBounds(top: TopLabelScores, bounds: KeptClassFrameBounds): TestBounds | null {
  const n = top.confidence.length;
  const estimate = cumulativeCalibrationTests(top.confidence, top.correct);
  if (estimate === null) return null;
  const lo = new Float64Array(n);
  const hi = new Float64Array(n);
  let widths = 0;
  let unsettled = 0;
  let vLo = 0;
  let vHi = 0;
  let nLo = 0;
  let nHi = 0;
  let wLo = 0;
  let wHi = 0;
  let v = 0;
  for (let i = 0; i < n; i++) {
    const c = top.confidence[i]!;
    v += c * (1 - c);
    if (bounds.uncertainTop1[i] === 1) {
      unsettled++;
      vHi += 0.25;
      nLo -= 0.125;
      nHi += 1;
      wHi += 1 / 16;
      // lo > hi: never inside a threshold's sweep below (counted in 2 U instead)
      lo[i] = Infinity;
      hi[i] = Infinity;
      continue;
    }
    const a = Math.max(0, c - bounds.confidenceDown[i]!);
    const b = Math.min(1, c + bounds.confidenceUp[i]!);
    lo[i] = a;
    hi[i] = b;
    widths += b - a;
    const [uLo, uHi] = concaveRange(a, b, 0.5, (x) => x * (1 - x));
    vLo += uLo;
    vHi += uHi;
    const y = top.correct[i]!;
    const [termLo, termHi] = convexRange(a, b, (2 * y + 1) / 4, (x) => (y - x) * (1 - 2 * x));
    nLo += termLo;
    nHi += termHi;
    const [hLo, hHi] = concaveRange(uLo, uHi, 0.125, (u) => u * (1 - 4 * u));
    wLo += hLo;
    wHi += hHi;
  }
  const slack = SUM_ROUNDING * n;
  [vLo, vHi, nLo, nHi, wLo, wHi] = [vLo - slack, vHi + slack, nLo - slack, nHi + slack, wLo - slack, wHi + slack];
  const e = maxOverlap(lo, hi) + widths + 2 * unsettled + slack;
  const rootV = Math.sqrt(v);
  const maxAbs = estimate.ks.value * rootV;
  const range = estimate.kuiper.value * rootV;
  const ksRange = ratioRange(Math.max(0, maxAbs - e), maxAbs + e, vLo, vHi);
  const kuiperRange = ratioRange(Math.max(0, range - 2 * e), range + 2 * e, vLo, vHi);
  const zRange = ratioRange(nLo, nHi, wLo, wHi);
  const absZ: [number, number] =
    zRange[0] <= 0 && zRange[1] >= 0
      ? [0, Math.max(-zRange[0], zRange[1])]
      : [Math.min(Math.abs(zRange[0]), Math.abs(zRange[1])), Math.max(Math.abs(zRange[0]), Math.abs(zRange[1]))];
  const z = estimate.spiegelhalterZ?.value ?? null;
  return {
    ks: farther(estimate.ks.value, ksRange),
    ksPValue: farther(
      estimate.ksPValue.value,
      pValueRange(ksRange, (x) => 1 - brownianMaxAbsCdf(x)),
    ),
    kuiper: farther(estimate.kuiper.value, kuiperRange),
    kuiperPValue: farther(
      estimate.kuiperPValue.value,
      pValueRange(kuiperRange, (x) => 1 - brownianRangeCdf(x)),
    ),
    spiegelhalterZ: z === null ? Infinity : farther(z, zRange),
    spiegelhalterPValue:
      z === null ? Infinity : farther(normalTwoSidedPValue(z), pValueRange(absZ, normalTwoSidedPValue)),
  };
}

/** The range of a convex f on [a, b] whose least point is `vertex`. */
function convexRange(a: number, b: number, vertex: number, f: (x: number) => number): [number, number] {
  const low = vertex > a && vertex < b ? f(vertex) : Math.min(f(a), f(b));
  return [low, Math.max(f(a), f(b))];
}

/** The range of a concave f on [a, b] whose greatest point is `vertex`. */
function concaveRange(a: number, b: number, vertex: number, f: (x: number) => number): [number, number] {
  const high = vertex > a && vertex < b ? f(vertex) : Math.max(f(a), f(b));
  return [Math.min(f(a), f(b)), high];
}

/** The range of x / sqrt(w) for x in [xLo, xHi] and w in [wLo, wHi] (w <= 0 possible: unbounded). */
function ratioRange(xLo: number, xHi: number, wLo: number, wHi: number): [number, number] {
  if (!(wLo > 0)) return [-Infinity, Infinity];
  const low = xLo / Math.sqrt(xLo >= 0 ? wHi : wLo);
  const high = xHi / Math.sqrt(xHi >= 0 ? wLo : wHi);
  return [low, high];
}

/**
 * The range of a P-value p(x) for x in [a, b], p decreasing in exact arithmetic (0 at x = Infinity):
 * both ends taken in either order, as 1 - CDF in floating point is not monotone to the last unit,
 * and widened by P_VALUE_ROUNDING within [0, 1].
 */
function pValueRange([a, b]: [number, number], p: (x: number) => number): [number, number] {
  const at = (x: number) => (Number.isFinite(x) ? p(x) : 0);
  const [pa, pb] = [at(a), at(b)];
  return [Math.max(0, Math.min(pa, pb) - P_VALUE_ROUNDING), Math.min(1, Math.max(pa, pb) + P_VALUE_ROUNDING)];
}

/** The Brownian CDFs' series and erfc are accurate to a few units in the last place of 1. */
const P_VALUE_ROUNDING = 1e-14;

/** How far the farther end of `range` lies from `value` (never below 0; unknown: Infinity). */
function farther(value: number, [low, high]: [number, number]): number {
  const bound = Math.max(0, value - low, high - value);
  return Number.isNaN(bound) ? Infinity : bound;
}

/**
 * The most settled frames whose ranges hold a threshold t on the left and not on the right
 * (lo_i <= t < hi_i), over every t: a sweep of both ends sorted, an end before a start at a tie.
 */
function maxOverlap(lo: Float64Array, hi: Float64Array): number {
  const starts = Float64Array.from(lo).sort();
  const ends = Float64Array.from(hi).sort();
  let open = 0;
  let most = 0;
  let e = 0;
  for (let s = 0; s < starts.length && starts[s]! !== Infinity; s++) {
    while (e < ends.length && ends[e]! <= starts[s]!) {
      e++;
      open--;
    }
    open++;
    if (open > most) most = open;
  }
  return most;
}
