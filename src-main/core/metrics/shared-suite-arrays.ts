import type { LogitArray } from '../../../src-shared/fusion/logits';
import {
  CLASSWISE_TERMS,
  classwiseTermsInto,
  type ClassColumnScratch,
} from '../../../src-shared/metrics/binned-metrics';
import { suiteBinnings, suiteTasks, type MetricSuiteOptions } from '../../../src-shared/metrics/metric-suite';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';
import type { ClassScores, TopLabelScores } from '../../../src-shared/metrics/scores';

/**
 * The arrays both threads of the parallel metric suite work on, over SharedArrayBuffers: the
 * logits, the softmax, log-sum-exp and top-label pairs both fill (each its half of the rows), the
 * labels, the classwise terms, and the counter that hands out work (Atomics.add, so each item is
 * taken once).
 */
export interface SharedSuiteArrays {
  classCount: number;
  /** null when the suite starts from probabilities */
  logits: LogitArray | null;
  probabilities: Float64Array;
  logSumExp: Float64Array;
  labels: Int32Array;
  top: TopLabelScores;
  terms: Float64Array;
  nextItem: Int32Array;
}

const shared = <T>(make: new (buffer: SharedArrayBuffer) => T, bytes: number): T =>
  new make(new SharedArrayBuffer(bytes));

/** Logits the helper can read: the caller's own when already shared, else a shared copy. */
function sharedLogits(logits: LogitArray): LogitArray {
  if (logits.buffer instanceof SharedArrayBuffer) return logits;
  const copy =
    logits instanceof Float32Array ? shared(Float32Array, logits.byteLength) : shared(Float64Array, logits.byteLength);
  copy.set(logits);
  return copy;
}

/**
 * The arrays for logits (softmax to come: `scores` null) or for scores already computed (their
 * probabilities and log-sum-exp copied in).
 */
export function sharedSuiteArrays(
  input: { logits: LogitArray; scores: null } | { logits: LogitArray | null; scores: ClassScores },
  labels: Int32Array,
  classCount: number,
  binningCount: number,
): SharedSuiteArrays {
  const n = labels.length;
  const labelsCopy = shared(Int32Array, labels.byteLength);
  labelsCopy.set(labels);
  const probabilities = shared(Float64Array, n * classCount * 8);
  const logSumExp = shared(Float64Array, n * 8);
  if (input.scores !== null) {
    probabilities.set(input.scores.probabilities);
    if (input.scores.logSumExp !== null) logSumExp.set(input.scores.logSumExp);
  }
  return {
    classCount,
    logits: input.logits === null ? null : sharedLogits(input.logits),
    probabilities,
    logSumExp,
    labels: labelsCopy,
    top: {
      confidence: shared(Float64Array, n * 8),
      predicted: shared(Int32Array, n * 4),
      correct: shared(Uint8Array, n),
    },
    terms: shared(Float64Array, binningCount * classCount * CLASSWISE_TERMS * 8),
    nextItem: shared(Int32Array, 4),
  };
}

export function scoresOfShared(arrays: SharedSuiteArrays): ClassScores {
  return {
    sampleCount: arrays.labels.length,
    classCount: arrays.classCount,
    probabilities: arrays.probabilities,
    labels: arrays.labels,
    logits: arrays.logits,
    logSumExp: arrays.logits === null ? null : arrays.logSumExp,
  };
}

/**
 * Takes work from the shared counter until none is left: the suite's longest task first, then one
 * class at a time (its column and classwise terms, written to the shared terms), then the other
 * tasks. Returns the results of the tasks this thread ran, by key.
 */
export function takeSuiteWork(arrays: SharedSuiteArrays, options: MetricSuiteOptions): Array<[string, MetricValue[]]> {
  const scores = scoresOfShared(arrays);
  const binnings = suiteBinnings(scores.sampleCount, options);
  const tasks = suiteTasks(scores, arrays.top, options);
  const k = arrays.classCount;
  const n = arrays.labels.length;
  let scratch: ClassColumnScratch | null = null;
  const results: Array<[string, MetricValue[]]> = [];
  for (;;) {
    const item = Atomics.add(arrays.nextItem, 0, 1);
    if (item >= k + tasks.length) return results;
    const c = item - 1;
    if (item === 0 || c >= k) {
      const task = tasks[item === 0 ? 0 : c - k + 1];
      results.push([task.key, task.run()]);
      continue;
    }
    scratch ??= { column: new Float64Array(n), outcome: new Uint8Array(n) };
    classwiseTermsInto(arrays.probabilities, arrays.labels, k, c, binnings, scratch, arrays.terms);
  }
}
