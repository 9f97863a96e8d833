import type { LogitArray } from '../../../src-shared/fusion/logits';
import { FusedRowScorer, type FusedRowScores } from '../../../src-shared/metrics/fused-row-scorer';

/**
 * What both threads of the parallel metric suite read and write to score the fused output of a
 * trace's frames top-label only (trace-scores.ts's topLabelScoresOfFrames, a trace of many classes):
 * the trace's logits in place (shared memory, as readTraceFile reads them), the gate values, frames
 * and labels copied into shared memory, and the outputs each thread fills for its share of the
 * frames. A frame is scored on its own (FusedRowScorer), so the split changes no bit.
 */
export interface SharedFusedRows {
  classCount: number;
  zStatic: LogitArray;
  zDyn: LogitArray;
  g: Float64Array;
  frames: Int32Array;
  labels: Int32Array;
  out: FusedRowScores;
}

/** Whether a trace's logits can be read by another thread in place. */
export const logitsShared = (zStatic: LogitArray, zDyn: LogitArray): boolean =>
  zStatic.buffer instanceof SharedArrayBuffer && zDyn.buffer instanceof SharedArrayBuffer;

function sharedCopy<T extends Float64Array | Int32Array>(values: T): T {
  const out = new (values.constructor as new (buffer: SharedArrayBuffer) => T)(
    new SharedArrayBuffer(values.byteLength),
  );
  out.set(values);
  return out;
}

/** The shared arrays for scoring `frames` of a trace at gate values `g`, their labels read from it. */
export function sharedFusedRows(
  trace: { zStatic: LogitArray; zDyn: LogitArray; classCount: number; labels: Int32Array },
  g: Float64Array,
  frames: Int32Array,
): SharedFusedRows {
  const n = frames.length;
  const labels = new Int32Array(new SharedArrayBuffer(n * 4));
  for (let j = 0; j < n; j++) labels[j] = trace.labels[frames[j]!]!;
  const top = {
    confidence: new Float64Array(new SharedArrayBuffer(n * 8)),
    predicted: new Int32Array(new SharedArrayBuffer(n * 4)),
    correct: new Uint8Array(new SharedArrayBuffer(n)),
  };
  return {
    classCount: trace.classCount,
    zStatic: trace.zStatic,
    zDyn: trace.zDyn,
    g: sharedCopy(g),
    frames: sharedCopy(frames),
    labels,
    out: {
      sampleNll: new Float64Array(new SharedArrayBuffer(n * 8)),
      sampleBrier: new Float64Array(new SharedArrayBuffer(n * 8)),
      top,
    },
  };
}

/** Scores entries [from, to) of the frames into the shared outputs (either thread's share). */
export function scoreFusedShare(rows: SharedFusedRows, from: number, to: number): void {
  const { out } = rows;
  new FusedRowScorer(rows.classCount).scoreInto(
    rows.zStatic,
    rows.zDyn,
    rows.g,
    rows.frames.subarray(from, to),
    rows.labels.subarray(from, to),
    1,
    {
      sampleNll: out.sampleNll.subarray(from, to),
      sampleBrier: out.sampleBrier.subarray(from, to),
      top: {
        confidence: out.top.confidence.subarray(from, to),
        predicted: out.top.predicted.subarray(from, to),
        correct: out.top.correct.subarray(from, to),
      },
    },
  );
}
