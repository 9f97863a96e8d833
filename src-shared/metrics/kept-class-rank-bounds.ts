import type { KeptClassFrameBounds } from './kept-class-bounds';
import type { TopLabelScores } from './scores';

/**
 * The stated bounds of the kept-class metrics that rank frames by confidence (kept-class-bounds.ts
 * states the others): each settled frame's full confidence lies in [lo, hi] = [c - down, c + up],
 * its correctness is the estimate's; an unsettled frame may be anywhere, right or wrong.
 * - AUROC (Mann-Whitney, ties 1/2) over P correct and N wrong settled frames: only a pair whose
 *   confidence ranges meet can change its order, W of them, so the settled frames' AUROC moves by at
 *   most W / (P N); taking an unsettled frame out or putting it back moves a mean over pairs by at
 *   most 1 / min(P, N), so with U of them the bound is W / (P N) + 2 U / min(P, N).
 * - AURC = (1/n) sum_k risk(k) = (1/n) sum_i e_i E[w(rank_i)], w(r) = sum_{k=r..n} 1/k, rank 1 the
 *   most confident, the expectation over orders within a tie (selective.ts). A settled frame's rank
 *   lies between 1 + (settled frames wholly above it) and 1 + (settled frames that may be above it)
 *   + U in both traces, so a wrong one moves the sum by at most w(first) - w(last) of that range;
 *   an unsettled frame adds e w in [0, w(1)] to either, at most H_n. The bound: (1/n) times their sum.
 * - E-AURC = AURC - (r + (1 - r) ln(1 - r)): the optimal term is increasing in the error rate r,
 *   which lies between E/n and (E + U)/n (E settled wrong frames), so it moves by at most its
 *   value's range there, on top of the AURC's bound.
 * The counts of ranges below or above one another are taken on 2^18 cells in O(n), not by sorting
 * (a day is millions of frames): a range counts as wholly below another only when its cell is two
 * below (cellOf), so a count of ranges apart can only be too small and one of ranges that may meet
 * too large; each bound can only widen, by the frames within a cell or two of one another.
 */
export function aurocBound(top: TopLabelScores, bounds: KeptClassFrameBounds, unsettled: number): number {
  const n = top.confidence.length;
  // cells of each settled frame's range ends, right and wrong apart
  const rightHighs = new Float64Array(CELLS);
  const wrongHighs = new Float64Array(CELLS);
  let p = 0;
  let q = 0;
  for (let i = 0; i < n; i++) {
    if (bounds.uncertainTop1[i] === 1) continue;
    const high = cellOf(top.confidence[i]! + bounds.confidenceUp[i]!);
    if (top.correct[i] === 1) {
      p++;
      rightHighs[high]++;
    } else {
      q++;
      wrongHighs[high]++;
    }
  }
  if (p === 0 || q === 0) return 1;
  const rightBelow = cumulativeBelow(rightHighs);
  const wrongBelow = cumulativeBelow(wrongHighs);
  // pairs whose ranges do not meet: one range's cell wholly below the other's
  let apart = 0;
  for (let i = 0; i < n; i++) {
    if (bounds.uncertainTop1[i] === 1) continue;
    const low = cellOf(top.confidence[i]! - bounds.confidenceDown[i]!);
    // a margin of one cell: the cell map is monotone up to rounding (cellOf)
    if (low < 2) continue;
    apart += top.correct[i] === 1 ? wrongBelow[low - 1]! : rightBelow[low - 1]!;
  }
  return Math.min(1, (p * q - apart) / (p * q) + (2 * unsettled) / Math.min(p, q));
}

/** The AURC bound above (AURC lies in [0, 1]). */
export function aurcBound(top: TopLabelScores, bounds: KeptClassFrameBounds, unsettled: number): number {
  const n = top.confidence.length;
  const lows = new Float64Array(CELLS);
  const highs = new Float64Array(CELLS);
  for (let i = 0; i < n; i++) {
    if (bounds.uncertainTop1[i] === 1) continue;
    lows[cellOf(top.confidence[i]! - bounds.confidenceDown[i]!)]++;
    highs[cellOf(top.confidence[i]! + bounds.confidenceUp[i]!)]++;
  }
  // lowsAbove[c]: settled ranges starting in a cell above c (wholly above a range ending in c);
  // highsFrom[c]: settled ranges ending in cell c or above (may be above a range starting in c)
  const lowsAbove = new Float64Array(CELLS);
  const highsFrom = new Float64Array(CELLS);
  let above = 0;
  let from = 0;
  for (let c = CELLS - 1; c >= 0; c--) {
    lowsAbove[c] = above;
    above += lows[c]!;
    from += highs[c]!;
    highsFrom[c] = from;
  }
  // H[m] = sum_{k <= m} 1/k, so w(a) - w(b) = H[b - 1] - H[a - 1]
  const harmonic = new Float64Array(n + 1);
  for (let m = 1; m <= n; m++) harmonic[m] = harmonic[m - 1]! + 1 / m;
  let sum = unsettled * harmonic[n]!;
  for (let i = 0; i < n; i++) {
    if (bounds.uncertainTop1[i] === 1 || top.correct[i] === 1) continue;
    const c = top.confidence[i]!;
    // each with a margin of one cell (cellOf): fewer ranges wholly above, more that may be above
    const highCell = cellOf(c + bounds.confidenceUp[i]!);
    const first = 1 + (highCell + 1 < CELLS ? lowsAbove[highCell + 1]! : 0);
    // the frame itself is among the ranges that may be above it: less one, plus one for the rank
    const last = highsFrom[Math.max(0, cellOf(c - bounds.confidenceDown[i]!) - 1)]! + unsettled;
    sum += harmonic[last - 1]! - harmonic[first - 1]!;
  }
  return Math.min(1, sum / n);
}

/** The E-AURC bound above (`aurc`: the AURC's bound, when already known). */
export function eAurcBound(
  top: TopLabelScores,
  bounds: KeptClassFrameBounds,
  unsettled: number,
  aurc: number = aurcBound(top, bounds, unsettled),
): number {
  const n = top.confidence.length;
  let wrong = 0;
  for (let i = 0; i < n; i++) if (bounds.uncertainTop1[i] === 0 && top.correct[i] === 0) wrong++;
  const optimal = (r: number) => r + (r < 1 ? (1 - r) * Math.log(1 - r) : 0);
  // E-AURC <= AURC <= 1
  return Math.min(1, aurc + optimal((wrong + unsettled) / n) - optimal(wrong / n));
}

/** Cells the range counts are taken on, uniform in key(c) = c - ln(1 - c) over [0, KEY_MAX]. */
const CELLS = 1 << 18;
/** key(c) below 1 is at most 1 - ln(2^-53) = 37.7: every confidence under 1 has a cell below the top. */
const KEY_MAX = 40;

/**
 * The cell of a confidence: uniform in c - ln(1 - c), so about 7.6e-5 wide at low confidence and
 * 1.5e-4 of (1 - c) wide near 1, where a trained classifier puts most of its frames (uniform cells
 * in c put them all in the top one, and the rank bounds then charged every pair there). The map is
 * monotone up to log1p's rounding, so the counts above keep a margin of one cell: a range counts as
 * wholly below another only when its cell is at least two below.
 */
function cellOf(confidence: number): number {
  if (!(confidence > 0)) return 0;
  if (confidence >= 1) return CELLS - 1;
  return Math.min(CELLS - 1, Math.floor(((confidence - Math.log1p(-confidence)) / KEY_MAX) * CELLS));
}

/** below[c] = counts in the cells below c. */
function cumulativeBelow(counts: Float64Array): Float64Array {
  const below = new Float64Array(CELLS);
  let total = 0;
  for (let c = 0; c < CELLS; c++) {
    below[c] = total;
    total += counts[c]!;
  }
  return below;
}
