import { keptClassMetricBounds, type KeptClassMetricBounds } from '../metrics/kept-class-bounds';
import type { ClassScores, TopLabelScores } from '../metrics/scores';
import { keptClassScoresOfFrames } from './kept-class-scores';
import type { Trace } from './trace';
import { topLabelScoresOfFrames } from './trace-scores';

/** What a kept-class trace's figures are, against the full trace it stands for. */
export interface KeptClassScoring {
  /** How far each metric may lie from the full trace's (withKeptClassBounds puts them on the metrics). */
  bounds: KeptClassMetricBounds;
  keep: number;
  classCount: number;
}

/** Top-label scores of a trace's frames; `kept` is set when they come from kept classes. */
export interface TopLabelTraceScores {
  scores: ClassScores;
  top: TopLabelScores;
  kept?: KeptClassScoring;
}

/**
 * The top-label pairs, NLL and Brier terms of a trace's output at gate values `g` (indexed by
 * frame; all 0 is the static branch, all 1 the dynamic one) on the labelled frames `frames`, each
 * frame fused and scored on its own so memory stays that of the trace: from every class
 * (topLabelScoresOfFrames), or from a kept-class trace's kept classes (kept-class-scores.ts) with
 * its bounds against the full trace. `knob metrics --trace` and a kept run's metrics.json both
 * score this way, so they agree.
 */
export function topLabelTraceScores(trace: Trace, g: Float64Array, frames: Int32Array): TopLabelTraceScores {
  const kept = trace.keptClasses;
  if (kept === undefined) return topLabelScoresOfFrames(trace, g, frames);
  const labels = new Int32Array(frames.length);
  for (let j = 0; j < frames.length; j++) labels[j] = trace.labels![frames[j]!]!;
  const { scores, top, bounds } = keptClassScoresOfFrames(kept, trace.classCount, g, frames, labels);
  return {
    scores,
    top,
    kept: { bounds: keptClassMetricBounds(top, bounds), keep: kept.keep, classCount: trace.classCount },
  };
}
