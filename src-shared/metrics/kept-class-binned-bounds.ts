import { locateBin, type EdgeRule } from './bin-location';
import { binCountOf, equalWidthEdges } from './binning';
import { sharpness } from './calibration-error';
import { binnedStatistics } from './column-statistics';
import type { KeptClassFrameBounds } from './kept-class-bounds';
import type { TopLabelScores } from './scores';

/**
 * The stated bounds of the kept-class binned metrics under B equal-width bins with any edge rule
 * (kept-class-bounds.ts states the rest). n labelled frames; a settled frame's full confidence lies
 * in [c_i - down_i, c_i + up_i], width d_i, and its correctness a_i is the estimate's; an
 * unsettled frame (its top-1 not settled) may be anywhere, right or wrong. In bin b, s_b settled
 * frames stay in it (their range inside b) and m_b others may be in it in either trace (a settled
 * frame whose range crosses into b, or any unsettled frame).
 * - ECE (L1) = (1/n) sum_b |sum_{i in b} (c_i - a_i)|: a settled frame that stays in its bin moves
 *   its bin's sum by at most d_i; one that may change bin, or an unsettled one, moves two bins' sums
 *   by at most 1 each: (sum_{settled, same bin} d_i + 2 #others) / n. The weighted top-label ECE per
 *   predicted class (Gupta & Ramdas 2021) is the same sum over (class, bin) cells: the same bound.
 * - A bin's gap, mean_{i in b} (c_i - a_i): adding t values in [-1, 1] to a mean of s_b moves it by
 *   at most 2 t / (s_b + t) <= 2 m_b / (s_b + m_b), once for each trace, and the settled frames'
 *   own mean moves by at most sum d_i / s_b; so beta_b = min(1, sum d_i / s_b + 4 m_b / (s_b + m_b)).
 * - MCE = max over non-empty bins of |gap_b|: max_b beta_b, or 1 where a bin with no settled frame
 *   may be non-empty in one trace only.
 * - ACE (netcal) = the unweighted mean of |gap_b| over non-empty bins: where every bin that may be
 *   non-empty holds a settled frame, the same bins are non-empty in both traces and it moves by the
 *   mean of beta_b over them; otherwise 1.
 * - RMSCE (L2 plug-in) = ||v||, v_b = sqrt(N_b / n) |gap_b| with N_b in [s_b, s_b + m_b]: by the
 *   triangle inequality it moves by at most sqrt(sum_b delta_b^2), delta_b = sqrt((s_b + m_b)/n)
 *   - sqrt(s_b/n) + sqrt((s_b + m_b)/n) beta_b (the weight's move times a gap of at most 1, plus the
 *   weight times the gap's move), or sqrt(m_b/n) for a bin with no settled frame.
 * - sharpness = sum_b (N_b/n) acc_b^2 = ||w||^2, w_b = (correct in b) / sqrt(n N_b): with A_b of the
 *   s_b settled frames right and t <= m_b others added, t_c <= t of them right, w_b lies between
 *   A_b / sqrt(n (s_b + m_b)) and (A_b + m_b) / sqrt(n (s_b + m_b)) ((A + t)/sqrt(s + t) increases
 *   with t as A <= s), a range of D_b = m_b / sqrt(n (s_b + m_b)); so ||w|| moves by at most
 *   D = sqrt(sum D_b^2) and ||w||^2 by at most D (2 ||w_est|| + D).
 * - refinement = sum_b (N_b/n) acc_b (1 - acc_b) = accuracy - sharpness: the accuracy's bound
 *   (unsettled frames / n) plus the sharpness's.
 * Every bound is capped at 1, each metric's range.
 */
export type EqualWidthKind = 'ECE' | 'MCE' | 'RMSCE' | 'ACE' | 'sharpness' | 'refinement';

/**
 * The bounds above for `kind` at any bins and edge rule; each binning's pass over the frames (a
 * day is millions) is made once and kept, however many of its metrics ask.
 */
export function equalWidthBounds(
  top: TopLabelScores,
  bounds: KeptClassFrameBounds,
  unsettled: number,
): (kind: EqualWidthKind, bins: number, edgeRule: EdgeRule) => number {
  const passes = new Map<string, { occupancy: Occupancy; estimateSharpness: number }>();
  const accuracyBound = unsettled / top.confidence.length;
  return (kind, bins, edgeRule) => {
    const key = `${bins} ${edgeRule}`;
    let pass = passes.get(key);
    if (pass === undefined) {
      pass = {
        occupancy: binOccupancy(top, bounds, { unsettled, bins, edgeRule }),
        estimateSharpness: sharpness(
          binnedStatistics(top.confidence, top.correct, { scheme: 'equal-width', bins, edgeRule }),
        ),
      };
      passes.set(key, pass);
    }
    return equalWidthBound(kind, top.confidence.length, pass.occupancy, pass.estimateSharpness, accuracyBound);
  };
}

function equalWidthBound(
  kind: EqualWidthKind,
  n: number,
  occupancy: Occupancy,
  estimateSharpness: number,
  accuracyBound: number,
): number {
  const { binCount, settled, settledWidth, others } = occupancy;
  let bound = 0;
  switch (kind) {
    case 'ECE':
      bound = occupancy.eceSum / n;
      break;
    case 'MCE':
    case 'ACE': {
      let nonEmpty = 0;
      for (let b = 0; b < binCount; b++) {
        const beta = gapBound(settled[b]!, settledWidth[b]!, others[b]!);
        if (beta === null) {
          if (others[b]! > 0) return 1;
          continue;
        }
        nonEmpty++;
        bound = kind === 'MCE' ? Math.max(bound, beta) : bound + beta;
      }
      if (kind === 'ACE' && nonEmpty > 0) bound /= nonEmpty;
      break;
    }
    case 'RMSCE': {
      let squares = 0;
      for (let b = 0; b < binCount; b++) {
        const s = settled[b]!;
        const beta = gapBound(s, settledWidth[b]!, others[b]!);
        const most = Math.sqrt((s + others[b]!) / n);
        const delta = beta === null ? most : most - Math.sqrt(s / n) + most * beta;
        squares += delta * delta;
      }
      bound = Math.sqrt(squares);
      break;
    }
    case 'sharpness':
    case 'refinement': {
      let squares = 0;
      for (let b = 0; b < binCount; b++) {
        const s = settled[b]!;
        const m = others[b]!;
        if (s + m > 0) squares += (m * m) / (n * (s + m));
      }
      const spread = Math.sqrt(squares);
      bound = spread * (2 * Math.sqrt(estimateSharpness) + spread);
      if (kind === 'refinement') bound += accuracyBound;
      break;
    }
  }
  return Math.min(1, bound);
}

interface Occupancy {
  binCount: number;
  settled: Float64Array;
  settledWidth: Float64Array;
  others: Float64Array;
  eceSum: number;
}

/** beta_b above, or null for a bin with no settled frame. */
function gapBound(settled: number, settledWidth: number, others: number): number | null {
  return settled === 0 ? null : Math.min(1, settledWidth / settled + (4 * others) / (settled + others));
}

/**
 * Per bin: how many settled frames stay in it, the sum of their ranges' widths, and how many other
 * frames may be in it in either trace; with the ECE's sum over frames (d_i or 2 each).
 */
function binOccupancy(
  top: TopLabelScores,
  bounds: KeptClassFrameBounds,
  { unsettled, bins, edgeRule }: { unsettled: number; bins: number; edgeRule: EdgeRule },
): Occupancy {
  const edges = equalWidthEdges(bins);
  const binCount = binCountOf({ scheme: 'equal-width', bins, edgeRule });
  const settled = new Float64Array(binCount);
  const settledWidth = new Float64Array(binCount);
  // crossings[b] - crossings[b - 1]: settled frames whose range starts by bin b, less those ended
  // before it (a difference array, so a range over many bins costs two entries)
  const crossings = new Float64Array(binCount + 1);
  let eceSum = 2 * unsettled;
  for (let i = 0; i < top.confidence.length; i++) {
    if (bounds.uncertainTop1[i] === 1) continue;
    const c = top.confidence[i]!;
    const down = bounds.confidenceDown[i]!;
    const up = bounds.confidenceUp[i]!;
    const low = locateBin(Math.max(0, c - down), edges, edgeRule);
    const high = locateBin(Math.min(1, c + up), edges, edgeRule);
    if (low === high) {
      settled[low]++;
      settledWidth[low] += up + down;
      eceSum += up + down;
    } else {
      crossings[low]++;
      crossings[high + 1]--;
      eceSum += 2;
    }
  }
  const others = new Float64Array(binCount);
  let crossing = 0;
  for (let b = 0; b < binCount; b++) {
    crossing += crossings[b]!;
    others[b] = crossing + unsettled;
  }
  return { binCount, settled, settledWidth, others, eceSum };
}
