import {
  binAccuracyPosterior,
  stratifiedBins,
  UNLABELLED_OUTCOME,
  type WindowOutcomes,
} from './stratified-calibration-error';

/** Per-frame hints that order the frames within a bin (each optional, one value a window frame). */
export interface ReviewHints {
  /** 1 where the branches' top-1 differ. */
  disagreement?: Uint8Array;
  /** How far u* moved from the frame before. */
  gateTargetMove?: Float64Array;
}

export interface QueuedFrame {
  /** Index within the window. */
  frame: number;
  bin: number;
  confidence: number;
  /** Why this frame, in words. */
  reason: string;
  /** How much its label is expected to narrow the window's ECE interval (half-width, ECE units). */
  narrowing: number;
}

/** A u* move from one frame to the next worth naming in a frame's reason (a tenth of its range). */
const NOTABLE_GATE_TARGET_MOVE = 0.1;

/** z of a two-sided 95 % interval: the narrowing is stated for the interval the desk shows. */
const Z95 = 1.959963984540054;

/**
 * The frames to label next: the ones whose labels shrink the window's stratified ECE interval most
 * (stratified-calibration-error.ts). Its variance is about sum_b w_b^2 p_b (1 - p_b) / (n_b + 2)
 * (each bin's Jeffreys posterior), so one more label in bin b removes
 * w_b^2 p_b (1 - p_b) (1 / (n_b + 2) - 1 / (n_b + 3)): greedily, the bin that removes most gets the
 * next label (a bin with none first, then the uncertain, crowded bins; Neyman's allocation in the
 * limit), and within the bin the frame where the branches disagree, then where u* moved most,
 * then the earliest. Each frame's narrowing is what its label takes off the interval's half-width,
 * z (sqrt(V) - sqrt(V - dV)), at the bin's current accuracy estimate.
 */
export function reviewQueue(window: WindowOutcomes, count: number, hints: ReviewHints = {}): QueuedFrame[] {
  const { bins, binOf } = stratifiedBins(window);
  const total = bins.reduce((n, b) => n + b.frames, 0);
  const candidates = bins.map(() => [] as number[]);
  for (let i = 0; i < binOf.length; i++) if (window.outcome[i] === UNLABELLED_OUTCOME) candidates[binOf[i]!]!.push(i);
  const priority = (i: number) => [hints.disagreement?.[i] ?? 0, hints.gateTargetMove?.[i] ?? 0, -i] as const;
  for (const list of candidates)
    list.sort((a, b) => {
      const pa = priority(a);
      const pb = priority(b);
      return pb[0] - pa[0] || pb[1] - pa[1] || pb[2] - pa[2];
    });
  const labelled = bins.map((b) => b.labelled);
  const spread = bins.map((b) => {
    const { mean } = binAccuracyPosterior(b);
    return mean * (1 - mean) * (b.frames / total) ** 2;
  });
  let variance = spread.reduce((v, s, b) => v + s / (labelled[b]! + 2), 0);
  const taken = bins.map(() => 0);
  const queue: QueuedFrame[] = [];
  while (queue.length < count) {
    let best = -1;
    let bestGain = 0;
    for (let b = 0; b < bins.length; b++) {
      if (taken[b]! >= candidates[b]!.length) continue;
      const gain = spread[b]! * (1 / (labelled[b]! + 2) - 1 / (labelled[b]! + 3));
      if (gain > bestGain) {
        best = b;
        bestGain = gain;
      }
    }
    if (best < 0) break;
    const frame = candidates[best]![taken[best]!++]!;
    const after = Math.max(0, variance - bestGain);
    const reasons = [
      labelled[best] === 0 ? 'a confidence bin with no label yet' : `confidence bin ${best + 1} of ${bins.length}`,
      ...((hints.disagreement?.[frame] ?? 0) === 1 ? ['the branches disagree'] : []),
      ...((hints.gateTargetMove?.[frame] ?? 0) > NOTABLE_GATE_TARGET_MOVE
        ? [`u* moved by ${hints.gateTargetMove![frame]!.toFixed(2)}`]
        : []),
    ];
    queue.push({
      frame,
      bin: best,
      confidence: window.confidence[frame]!,
      reason: reasons.join(', '),
      narrowing: Z95 * (Math.sqrt(variance) - Math.sqrt(after)),
    });
    labelled[best]!++;
    variance = after;
  }
  return queue;
}
