import { KnobError } from '../errors';
import { FusedRowScorer } from '../metrics/fused-row-scorer';
import {
  allocateTopLabelScores,
  scoredLogits,
  topLabelOnlyScores,
  type ClassScores,
  type TopLabelScores,
} from '../metrics/scores';
import type { LogitArray } from '../fusion/logits';
import type { RowConditions } from '../calibrators/fit-input';
import { UNKNOWN_LABEL, type Trace } from './trace';

/**
 * Scores for the metrics from a trace's labelled frames only (frames with label -1 are left out,
 * and the count used is part of every result through ClassScores.sampleCount). `logits` is any
 * row-major n x K array over the trace's frames: a branch, or the fused logits of a replay.
 */
export function labelledFrames(trace: Trace): Int32Array {
  if (trace.labels === null) return new Int32Array(0);
  let n = 0;
  for (let i = 0; i < trace.frameCount; i++) if (trace.labels[i] !== UNKNOWN_LABEL) n++;
  const out = new Int32Array(n);
  let j = 0;
  for (let i = 0; i < trace.frameCount; i++) if (trace.labels[i] !== UNKNOWN_LABEL) out[j++] = i;
  return out;
}

export function scoresOfFrames(trace: Trace, logits: LogitArray, frames: Int32Array): ClassScores {
  return scoredFrames(trace, logits, frames, false).scores;
}

/**
 * scoresOfFrames with the top-label pairs of the same pass. `overwrite`: `logits` is the caller's to
 * lose (a replay's fused logits), so the probabilities are written over it rather than into a
 * second n x K buffer (scoredLogits); the scores then keep no logits.
 */
export function scoredFrames(
  trace: Trace,
  logits: LogitArray,
  frames: Int32Array,
  overwrite: boolean,
): { scores: ClassScores; top: TopLabelScores } {
  const { rows, labels } = labelledLogitRows(trace, logits, frames);
  return scoredLogits(rows, trace.classCount, labels, overwrite);
}

/**
 * The logit rows of the given labelled frames (indices of `trace`, increasing) and their labels:
 * when every frame is labelled, the rows are the logits as they are, read in place rather than
 * copied (an n x K copy was a third of a ten-class knob turn); otherwise a new array of the rows.
 */
export function labelledLogitRows(
  trace: Trace,
  logits: LogitArray,
  frames: Int32Array,
): { rows: LogitArray; labels: Int32Array } {
  if (trace.labels === null || frames.length === 0)
    throw new KnobError('INVALID_INPUT', 'the trace has no labelled frames; metrics need true labels');
  const k = trace.classCount;
  const labels = new Int32Array(frames.length);
  for (let j = 0; j < frames.length; j++) labels[j] = trace.labels[frames[j]];
  if (frames.length === trace.frameCount) return { rows: logits.subarray(0, frames.length * k), labels };
  const rows = new Float64Array(frames.length * k);
  for (let j = 0; j < frames.length; j++) {
    const i = frames[j];
    for (let c = 0; c < k; c++) rows[j * k + c] = logits[i * k + c];
  }
  return { rows, labels };
}

/**
 * The top-label pairs, NLL and Brier terms of the fused output of the given frames at the gate
 * values `g` (indexed by frame; all 0 is the static branch, all 1 the dynamic one, bit for bit),
 * fused and scored a frame at a time: memory that does not grow with K (no fused logits, no
 * probabilities kept), for outputs with many classes. The scores hold no probabilities.
 */
export function topLabelScoresOfFrames(
  trace: Trace,
  g: Float64Array,
  frames: Int32Array,
): { scores: ClassScores; top: TopLabelScores } {
  if (trace.labels === null || frames.length === 0)
    throw new KnobError('INVALID_INPUT', 'the trace has no labelled frames; metrics need true labels');
  const k = trace.classCount;
  const n = frames.length;
  const labels = Int32Array.from(frames, (i) => trace.labels![i]!);
  const out = {
    sampleNll: new Float64Array(n),
    sampleBrier: new Float64Array(n),
    top: allocateTopLabelScores(n),
  };
  new FusedRowScorer(k).scoreInto(trace.zStatic, trace.zDyn, g, frames, labels, 1, out);
  return { scores: topLabelOnlyScores(k, labels, out.sampleNll, out.sampleBrier), top: out.top };
}

/** The model's features of the given frames, in their order (null when the trace has none). */
export function featuresOfFrames(trace: Trace, frames: Int32Array): { width: number; values: Float32Array } | null {
  if (trace.features === undefined) return null;
  const { width, values } = trace.features;
  const out = new Float32Array(frames.length * width);
  frames.forEach((f, i) => out.set(values.subarray(f * width, (f + 1) * width), i * width));
  return { width, values: out };
}

/** Where frame `frame`'s features sit in the trace (for a row function), or null without features. */
export function frameFeatures(trace: Trace, frame: number): { values: Float32Array; offset: number } | null {
  return trace.features === undefined ? null : { values: trace.features.values, offset: frame * trace.features.width };
}

/**
 * The condition each of `frames` was recorded under, named by the values of the metadata `columns`
 * (one column: its value, "contrast"; several: joined, "contrast, severity 5"; a number column reads
 * "NAME VALUE"), for the condition-aware calibrator (-1 where a frame has no value); null when the
 * trace lacks any of the columns. `hysteresisFrames`: the one a calibrator fitted on them applies.
 */
export function conditionsOfFrames(
  trace: Trace,
  frames: Int32Array,
  columns: readonly string[],
  hysteresisFrames?: number,
): RowConditions | null {
  const read = columns.map((name) => ({ name, column: trace.metadata[name] }));
  if (read.length === 0 || read.some((c) => c.column === undefined)) return null;
  const names: string[] = [];
  const codeOf = new Map<string, number>();
  const codes = new Int32Array(frames.length);
  frames.forEach((frame, i) => {
    const values = read.map(({ name: columnName, column }) =>
      column!.kind === 'category'
        ? column!.dictionary[column!.codes[frame]]
        : Number.isFinite(column!.values[frame])
          ? `${columnName} ${column!.values[frame]}`
          : undefined,
    );
    // a frame without a value in some column has no known condition
    if (values.some((v) => v === undefined || v === '')) {
      codes[i] = -1;
      return;
    }
    const name = values.join(', ');
    let code = codeOf.get(name);
    if (code === undefined) {
      code = names.length;
      names.push(name);
      codeOf.set(name, code);
    }
    codes[i] = code;
  });
  return hysteresisFrames === undefined ? { names, codes } : { names, codes, hysteresisFrames };
}
