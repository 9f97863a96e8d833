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
 */
export function aurocBound(top: TopLabelScores, bounds: KeptClassFrameBounds, unsettled: number): number {
  const n = top.confidence.length;
  let p = 0;
  let q = 0;
  for (let i = 0; i < n; i++) {
    if (bounds.uncertainTop1[i] === 1) continue;
    if (top.correct[i] === 1) p++;
    else q++;
  }
  if (p === 0 || q === 0) return 1;
  const right = settledRanges(top, bounds, p, 1);
  const wrong = settledRanges(top, bounds, q, 0);
  // pairs whose ranges do not meet: one range wholly below the other
  const apart = whollyBelow(right.highs, wrong.lows) + whollyBelow(wrong.highs, right.lows);
  return Math.min(1, (p * q - apart) / (p * q) + (2 * unsettled) / Math.min(p, q));
}

/** The AURC bound above (AURC lies in [0, 1]). */
export function aurcBound(top: TopLabelScores, bounds: KeptClassFrameBounds, unsettled: number): number {
  const n = top.confidence.length;
  const settled = n - unsettled;
  const all = settledRanges(top, bounds, settled, null);
  all.lows.sort();
  all.highs.sort();
  // H[m] = sum_{k <= m} 1/k, so w(a) - w(b) = H[b - 1] - H[a - 1]
  const harmonic = new Float64Array(n + 1);
  for (let m = 1; m <= n; m++) harmonic[m] = harmonic[m - 1]! + 1 / m;
  let sum = unsettled * harmonic[n]!;
  for (let i = 0; i < n; i++) {
    if (bounds.uncertainTop1[i] === 1 || top.correct[i] === 1) continue;
    const c = top.confidence[i]!;
    const lo = Math.max(0, c - bounds.confidenceDown[i]!);
    const hi = Math.min(1, c + bounds.confidenceUp[i]!);
    const first = 1 + (settled - countSorted(all.lows, hi, 'at most'));
    // settled frames that may be above it: hi_j >= lo, less the frame itself
    const last = settled - countSorted(all.highs, lo, 'below') + unsettled;
    sum += harmonic[last - 1]! - harmonic[first - 1]!;
  }
  return Math.min(1, sum / n);
}

/** The E-AURC bound above. */
export function eAurcBound(top: TopLabelScores, bounds: KeptClassFrameBounds, unsettled: number): number {
  const n = top.confidence.length;
  let wrong = 0;
  for (let i = 0; i < n; i++) if (bounds.uncertainTop1[i] === 0 && top.correct[i] === 0) wrong++;
  const optimal = (r: number) => r + (r < 1 ? (1 - r) * Math.log(1 - r) : 0);
  return aurcBound(top, bounds, unsettled) + optimal((wrong + unsettled) / n) - optimal(wrong / n);
}

/** The confidence ranges of the settled frames that are right (1), wrong (0) or either (null). */
function settledRanges(
  top: TopLabelScores,
  bounds: KeptClassFrameBounds,
  count: number,
  correct: 0 | 1 | null,
): { lows: Float64Array; highs: Float64Array } {
  const lows = new Float64Array(count);
  const highs = new Float64Array(count);
  let at = 0;
  for (let i = 0; i < top.confidence.length; i++) {
    if (bounds.uncertainTop1[i] === 1 || (correct !== null && top.correct[i] !== correct)) continue;
    const c = top.confidence[i]!;
    lows[at] = Math.max(0, c - bounds.confidenceDown[i]!);
    highs[at++] = Math.min(1, c + bounds.confidenceUp[i]!);
  }
  return { lows, highs };
}

/** How many pairs (a, b) have a's range wholly below b's: highs[a] < lows[b] (both sorted here, in place). */
function whollyBelow(highs: Float64Array, lows: Float64Array): number {
  highs.sort();
  lows.sort();
  // one merge: for each low in increasing order, the highs below it only grow
  let count = 0;
  let below = 0;
  for (let j = 0; j < lows.length; j++) {
    while (below < highs.length && highs[below]! < lows[j]!) below++;
    count += below;
  }
  return count;
}

/** How many of the sorted `values` are below `x` ('below') or at most `x` ('at most'). */
function countSorted(values: Float64Array, x: number, side: 'below' | 'at most'): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid]! < x || (side === 'at most' && values[mid] === x)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
