import type { LogitArray } from '../../../src-shared/fusion/logits';
import { suiteTasks, type MetricSuiteOptions } from '../../../src-shared/metrics/metric-suite';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';
import type { ClassScores, TopLabelScores } from '../../../src-shared/metrics/scores';

/**
 * The arrays both threads of the parallel metric suite work on, over SharedArrayBuffers: the
 * helper's logits, the softmax, per-sample NLL and top-label pairs both fill (each its share of
 * the rows), the labels, and the counter that hands out work (Atomics.add, so each item is taken
 * once).
 */
export interface SharedSuiteArrays {
  classCount: number;
  /**
   * Logits the helper reads (rows [helperFrom, n)); null when the suite starts from scores. The
   * caller's own array when already shared, else a buffer of the full size holding those rows
   * only: the softmax pass leaves nothing that needs the logits afterwards (ClassScores.sampleNll).
   */
  helperLogits: LogitArray | null;
  probabilities: Float64Array;
  sampleNll: Float64Array;
  /** false when the scores came without logits (NLL from probabilities) */
  hasSampleNll: boolean;
  labels: Int32Array;
  top: TopLabelScores;
  nextItem: Int32Array;
}

const shared = <T>(make: new (buffer: SharedArrayBuffer) => T, bytes: number): T =>
  new make(new SharedArrayBuffer(bytes));

/**
 * Logits the helper can read from row `from` on: the caller's own when already shared, else rows
 * [from, n) copied into a shared buffer of the full size (the pages of the rows before are never
 * touched, so never allocated).
 */
function sharedLogits(logits: LogitArray, classCount: number, from: number): LogitArray {
  if (logits.buffer instanceof SharedArrayBuffer) return logits;
  const copy =
    logits instanceof Float32Array ? shared(Float32Array, logits.byteLength) : shared(Float64Array, logits.byteLength);
  copy.set(logits.subarray(from * classCount), from * classCount);
  return copy;
}

/**
 * The arrays for logits (softmax to come: `scores` null; the helper takes rows [helperFrom, n))
 * or for scores already computed (their probabilities and per-sample NLL copied in).
 */
export function sharedSuiteArrays(
  input: { logits: LogitArray; scores: null } | { scores: ClassScores },
  labels: Int32Array,
  classCount: number,
  helperFrom: number,
): SharedSuiteArrays {
  const n = labels.length;
  const labelsCopy = shared(Int32Array, labels.byteLength);
  labelsCopy.set(labels);
  const probabilities = shared(Float64Array, n * classCount * 8);
  const sampleNll = shared(Float64Array, n * 8);
  const scores = input.scores;
  if (scores !== null) {
    probabilities.set(scores.probabilities);
    if (scores.sampleNll !== null) sampleNll.set(scores.sampleNll);
  }
  return {
    classCount,
    helperLogits: scores === null ? sharedLogits(input.logits, classCount, helperFrom) : null,
    probabilities,
    sampleNll,
    hasSampleNll: scores === null || scores.sampleNll !== null,
    labels: labelsCopy,
    top: {
      confidence: shared(Float64Array, n * 8),
      predicted: shared(Int32Array, n * 4),
      correct: shared(Uint8Array, n),
    },
    nextItem: shared(Int32Array, 4),
  };
}

/** The scores in the shared arrays; `logits`: the caller's, for the caller (the tasks never read them). */
export function scoresOfShared(arrays: SharedSuiteArrays, logits: LogitArray | null = null): ClassScores {
  return {
    sampleCount: arrays.labels.length,
    classCount: arrays.classCount,
    probabilities: arrays.probabilities,
    labels: arrays.labels,
    logits,
    sampleNll: arrays.hasSampleNll ? arrays.sampleNll : null,
  };
}

/**
 * Takes the suite's tasks (longest first) from the shared counter until none is left. Returns the
 * results of the tasks this thread ran, by key.
 */
export function takeSuiteWork(arrays: SharedSuiteArrays, options: MetricSuiteOptions): Array<[string, MetricValue[]]> {
  const tasks = suiteTasks(scoresOfShared(arrays), arrays.top, options);
  const results: Array<[string, MetricValue[]]> = [];
  for (;;) {
    const item = Atomics.add(arrays.nextItem, 0, 1);
    if (item >= tasks.length) return results;
    results.push([tasks[item]!.key, tasks[item]!.run()]);
  }
}
