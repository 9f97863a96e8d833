import { assignBins, type BinningSpec } from './binning';
import type { TopLabelScores } from './scores';

export type DebiasedL2Kind = 'debiased L2-CE' | 'debiased L2-CE (U-statistic)';

/** Per bin: settled frames that stay, their ranges' widths, other frames that may be in it, and how far v_b may move. */
export interface DebiasedBinOccupancy {
  binCount: number;
  settled: Float64Array;
  settledWidth: Float64Array;
  others: Float64Array;
  weightedGapMoves: Float64Array;
}

/**
 * Stated bounds of the debiased L2 calibration errors of a kept-class trace (kept-class-binned-
 * bounds.ts states the occupancy they start from). Both are sqrt(max(0, T)), T = sum_b t_b over
 * bins of N_b >= 2 (t_b = 0 below), with r_i = y_i - c_i, S_b = sum r, Q_b = sum r^2,
 * v_b = sqrt(N_b / n) |S_b / N_b| (the RMSCE's per-bin term):
 * - Kumar et al. 2019: t_b = (N_b / n)(gap_b^2 - acc_b (1 - acc_b) / (N_b - 1)) = v_b^2 - w_b,
 *   w_b in [0, 1 / (2 n)];
 * - Sun et al. 2024's U-statistic: t_b = (S_b^2 - Q_b) / (n (N_b - 1)) = f_b (v_b^2 - q_b),
 *   f_b = N_b / (N_b - 1) in (1, 2], q_b = Q_b / (N_b n) in [0, 1 / n].
 * A bin no other frame may enter (m_b = 0) keeps its frames and their correctness, each r_i moving
 * by at most d_i (D_b = sum d_i): the gap by D_b / N_b, so v_b^2 by delta (2 v_b + delta) at most
 * (Kumar, w_b fixed); S_b by D_b and each r_i^2 by d_i (2 |r_i| + d_i) <= 3 d_i (Sun). Any other bin
 * takes the whole range its t_b can have in the full trace: v_b' within its weighted gap move of v_b, N_b'
 * from s_b to s_b + m_b (N_b' < 2 possible, then t_b' = 0, when s_b < 2), and the rest as above; its
 * move is the farther end from the estimate's t_b. T moves by at most B = sum_b of those, and
 * sqrt(max(0, T)) by the farther of sqrt(max(0, T - B)) and sqrt(T + B) from the estimate.
 */
export function debiasedL2Bound(
  kind: DebiasedL2Kind,
  top: TopLabelScores,
  spec: BinningSpec,
  occupancy: DebiasedBinOccupancy,
): number {
  const n = top.confidence.length;
  const { binCount, settled, settledWidth, others, weightedGapMoves } = occupancy;
  const { binOf } = assignBins(top.confidence, spec);
  const counts = new Float64Array(binCount);
  const sums = new Float64Array(binCount);
  const squares = new Float64Array(binCount);
  const positives = new Float64Array(binCount);
  for (let i = 0; i < n; i++) {
    const r = top.correct[i]! - top.confidence[i]!;
    const b = binOf[i]!;
    counts[b]++;
    sums[b] += r;
    squares[b] += r * r;
    positives[b] += top.correct[i]!;
  }
  const sun = kind === 'debiased L2-CE (U-statistic)';
  let total = 0;
  let move = 0;
  for (let b = 0; b < binCount; b++) {
    const count = counts[b]!;
    const s = sums[b]!;
    const v2 = count > 0 ? (s * s) / (count * n) : 0;
    const accuracy = count > 0 ? positives[b]! / count : 0;
    const t =
      count < 2
        ? 0
        : sun
          ? (s * s - squares[b]!) / (n * (count - 1))
          : v2 - ((count / n) * accuracy * (1 - accuracy)) / (count - 1);
    total += t;
    const m = others[b]!;
    const stay = settled[b]!;
    if (m === 0) {
      if (count < 2) continue;
      const widths = settledWidth[b]!;
      if (sun) move += (widths * (2 * Math.abs(s) + widths) + 3 * widths) / (n * (count - 1));
      else {
        const gapMove = widths / count;
        move += (count / n) * gapMove * (2 * Math.abs(s / count) + gapMove);
      }
      continue;
    }
    if (stay + m < 2) {
      // fewer than two frames in either trace: no term in the full one
      move += Math.abs(t);
      continue;
    }
    const v = Math.sqrt(v2);
    const delta = weightedGapMoves[b]!;
    const lowV2 = Math.max(0, v - delta) ** 2;
    const highV2 = (v + delta) ** 2;
    // f' from (s + m) / (s + m - 1) to s / (s - 1), at most 2 (N' >= 2)
    const fLow = sun ? (stay + m) / (stay + m - 1) : 1;
    const fHigh = sun ? (stay >= 2 ? stay / (stay - 1) : 2) : 1;
    const restHigh = sun ? 1 / n : 1 / (2 * n);
    const lowest = lowV2 - restHigh >= 0 ? fLow * (lowV2 - restHigh) : fHigh * (lowV2 - restHigh);
    let low = lowest;
    let high = fHigh * highV2;
    if (stay < 2) {
      low = Math.min(0, low);
      high = Math.max(0, high);
    }
    move += Math.max(t - low, high - t);
  }
  const estimate = Math.sqrt(Math.max(0, total));
  const slack = 1e-12 * (1 + n * 1e-3);
  return Math.min(
    1,
    Math.max(estimate - Math.sqrt(Math.max(0, total - move)), Math.sqrt(Math.max(0, total + move)) - estimate) + slack,
  );
}
