import type { LogitArray } from '../../../src-shared/fusion/logits';
import { suiteTasks, type MetricSuiteOptions } from '../../../src-shared/metrics/metric-suite';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';
import type { ClassScores, TopLabelScores } from '../../../src-shared/metrics/scores';

/**
 * The arrays both threads of the parallel metric suite work on, over SharedArrayBuffers: the
 * helper's logits, the softmax, per-sample NLL and Brier terms and top-label pairs both fill (each its share of
 * the rows), the labels, and the counter that hands out work (Atomics.add, so each item is taken
 * once).
 */
export interface SharedSuiteArrays {
  classCount: number;
  /**
   * Logits the helper reads; null when the suite starts from scores. The caller's own array when
   * already shared, else a buffer of the full size holding the helper's rows only: the softmax
   * pass leaves nothing that needs the logits afterwards (ClassScores.sampleNll).
   */
  helperLogits: LogitArray | null;
  probabilities: Float64Array;
  sampleNll: Float64Array;
  sampleBrier: Float64Array;
  /** false when the scores came without per-sample Brier terms (built by hand) */
  hasSampleBrier: boolean;
  /** false when the scores came without logits (NLL from probabilities) */
  hasSampleNll: boolean;
  labels: Int32Array;
  top: TopLabelScores;
  nextItem: Int32Array;
}

const shared = <T>(make: new (buffer: SharedArrayBuffer) => T, bytes: number): T =>
  new make(new SharedArrayBuffer(bytes));

/**
 * Logits the helper can read: the caller's own when already shared, else a shared buffer of the
 * same size that copyLogitRows fills with the helper's rows only (the pages of the other rows are
 * never touched, so never allocated): `spare`, the previous computation's, when it fits (it never
 * leaves the suite, and allocating 80 MB per call made V8 collect garbage at random moments).
 */
function sharedLogits(logits: LogitArray, spare: LogitArray | null): LogitArray {
  if (logits.buffer instanceof SharedArrayBuffer) return logits;
  if (spare !== null && spare.constructor === logits.constructor && spare.length === logits.length) return spare;
  return logits instanceof Float32Array
    ? shared(Float32Array, logits.byteLength)
    : shared(Float64Array, logits.byteLength);
}

/** Copies rows [from, to) of the caller's logits where the helper reads them (nothing when shared already). */
export function copyLogitRows(arrays: SharedSuiteArrays, logits: LogitArray, from: number, to: number): void {
  const target = arrays.helperLogits;
  if (target === null || target === logits) return;
  const k = arrays.classCount;
  target.set(logits.subarray(from * k, to * k), from * k);
}

/**
 * The arrays for logits (softmax to come: `scores` null; the helper's rows are copied by
 * copyLogitRows) or for scores already computed (their probabilities and per-sample terms copied in).
 */
export function sharedSuiteArrays(
  input: { logits: LogitArray; scores: null } | { scores: ClassScores },
  labels: Int32Array,
  classCount: number,
  spareLogits: LogitArray | null = null,
): SharedSuiteArrays {
  const n = labels.length;
  const labelsCopy = shared(Int32Array, labels.byteLength);
  labelsCopy.set(labels);
  const probabilities = shared(Float64Array, n * classCount * 8);
  const sampleNll = shared(Float64Array, n * 8);
  const sampleBrier = shared(Float64Array, n * 8);
  const scores = input.scores;
  if (scores !== null) {
    probabilities.set(scores.probabilities);
    if (scores.sampleNll !== null) sampleNll.set(scores.sampleNll);
    if (scores.sampleBrier !== null) sampleBrier.set(scores.sampleBrier);
  }
  return {
    classCount,
    helperLogits: scores === null ? sharedLogits(input.logits, spareLogits) : null,
    probabilities,
    sampleNll,
    hasSampleNll: scores === null || scores.sampleNll !== null,
    sampleBrier,
    hasSampleBrier: scores === null || scores.sampleBrier !== null,
    labels: labelsCopy,
    top: {
      confidence: shared(Float64Array, n * 8),
      predicted: shared(Int32Array, n * 4),
      correct: shared(Uint8Array, n),
    },
    nextItem: shared(Int32Array, 4),
  };
}

/**
 * The arrays for the top-label tasks only (the suite with options.everyClass false): copies of the
 * labels, per-sample NLL and Brier terms and top-label pairs, and no probabilities (none of those
 * tasks reads them), so the n x K table stays where it is.
 */
export function sharedTopLabelArrays(scores: ClassScores, top: TopLabelScores): SharedSuiteArrays {
  const n = scores.sampleCount;
  const copy = <T extends Float64Array | Int32Array | Uint8Array>(values: T): T => {
    const out = new (values.constructor as new (buffer: SharedArrayBuffer) => T)(
      new SharedArrayBuffer(values.byteLength),
    );
    out.set(values);
    return out;
  };
  return {
    classCount: scores.classCount,
    helperLogits: null,
    probabilities: shared(Float64Array, 0),
    sampleNll: scores.sampleNll === null ? shared(Float64Array, n * 8) : copy(scores.sampleNll),
    hasSampleNll: scores.sampleNll !== null,
    sampleBrier: scores.sampleBrier === null ? shared(Float64Array, n * 8) : copy(scores.sampleBrier),
    hasSampleBrier: scores.sampleBrier !== null,
    labels: copy(scores.labels),
    top: { confidence: copy(top.confidence), predicted: copy(top.predicted), correct: copy(top.correct) },
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
    sampleBrier: arrays.hasSampleBrier ? arrays.sampleBrier : null,
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
