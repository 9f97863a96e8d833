import { KnobError } from '../../../src-shared/errors';
import { branchDisagreement } from '../../../src-shared/drift';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import {
  reviewQueue,
  stratifiedBins,
  stratifiedEceIdentity,
  stratifiedEceInterval,
  UNLABELLED_OUTCOME,
} from '../../../src-shared/review';
import { keptClassEstimateNote } from '../../../src-shared/trace/kept-classes';
import { replay } from '../../../src-shared/trace/replay';
import { UNKNOWN_LABEL, type Trace } from '../../../src-shared/trace/trace';

export interface QueueReviewInput {
  trace: Trace;
  settings: GateSettings;
  /** Frames [start, end); null: the last DEFAULT_WINDOW_FRAMES (the desk's 'last 2,000 frames'). */
  window: { start: number; end: number } | null;
  count: number;
  draws: number;
  seed: number;
}

export interface QueueReviewResult {
  windowStart: number;
  windowEnd: number;
  labelledFrames: number;
  identity: string;
  /** null when the window has no labelled frame: then only the interval the prior allows. */
  ece: { value: number | null; low: number; high: number };
  /** Set on a kept-class trace: its confidences and top-1 are the kept-class estimates. */
  approximation?: string;
  queue: Array<{ frame: number; seconds: number; confidence: number; reason: string; narrowing: number }>;
}

export const DEFAULT_WINDOW_FRAMES = 2000;

/**
 * The review queue of a recording's window (`knob review`): its stratified ECE with an interval,
 * and the frames whose labels would narrow that interval most (src-shared/review), each with its
 * stream time, why it was chosen and by how much. The hints are the branches' disagreement (every
 * class only) and how far u* moved.
 */
export function queueReview(input: QueueReviewInput): QueueReviewResult {
  const { trace } = input;
  const n = trace.frameCount;
  const window = input.window ?? { start: Math.max(0, n - DEFAULT_WINDOW_FRAMES), end: n };
  if (window.start < 0 || window.end > n || window.end - window.start < 2)
    throw new KnobError(
      'INVALID_INPUT',
      `the window ${window.start}:${window.end} must lie within the recording's ${n} frames and hold at least 2`,
    );
  const replayed = replay(trace, input.settings, { logits: 'kept classes too' });
  const size = window.end - window.start;
  const confidence = replayed.confidence.slice(window.start, window.end);
  const outcome = new Int8Array(size).fill(UNLABELLED_OUTCOME);
  let labelled = 0;
  if (trace.labels !== null)
    for (let j = 0; j < size; j++) {
      const label = trace.labels[window.start + j]!;
      if (label === UNKNOWN_LABEL) continue;
      outcome[j] = replayed.top1[window.start + j] === label ? 1 : 0;
      labelled++;
    }
  const gateTargetMove = new Float64Array(size);
  for (let j = 0; j < size; j++) {
    const i = window.start + j;
    gateTargetMove[j] = i === 0 ? 0 : Math.abs(trace.uRef[i]! - trace.uRef[i - 1]!);
  }
  const disagreement =
    trace.keptClasses === undefined ? branchDisagreement(trace, window.start, window.end) : undefined;
  const windowOutcomes = { confidence, outcome };
  const queue = reviewQueue(windowOutcomes, input.count, {
    gateTargetMove,
    ...(disagreement === undefined ? {} : { disagreement }),
  });
  return {
    windowStart: window.start,
    windowEnd: window.end,
    labelledFrames: labelled,
    identity: stratifiedEceIdentity(),
    ece: stratifiedEceInterval(stratifiedBins(windowOutcomes).bins, { draws: input.draws, seed: input.seed }),
    approximation: keptClassEstimateNote(trace),
    queue: queue.map((q) => ({
      frame: window.start + q.frame,
      seconds: trace.timestampsSeconds[window.start + q.frame]!,
      confidence: q.confidence,
      reason: q.reason,
      narrowing: q.narrowing,
    })),
  };
}
