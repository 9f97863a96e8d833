import { KnobError } from '../../../src-shared/errors';
import type { LogitArray } from '../../../src-shared/fusion/logits';
import {
  assembleSuite,
  metricSuite,
  suiteTasks,
  type MetricSuiteOptions,
} from '../../../src-shared/metrics/metric-suite';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';
import type { BinningSpec } from '../../../src-shared/metrics/binning';
import {
  checkedShapeAndLabels,
  scoreRowsInto,
  scoresFromLogits,
  topLabelOnlyScores,
  topLabelRowsInto,
  type ClassScores,
  type TopLabelScores,
} from '../../../src-shared/metrics/scores';
import type { Trace } from '../../../src-shared/trace/trace';
import { topLabelScoresOfFrames } from '../../../src-shared/trace/trace-scores';
import { startEntryWorker } from '../workers/entry-worker';
import { logitsShared, scoreFusedShare, sharedFusedRows } from './shared-fused-rows';
import type { FusedScoreTableParts } from '../../../src-shared/fusion/fused-score-table';
import type { TableRowsRequest } from './table-rows';
import { ThreadChannel } from '../workers/worker-channel';
import type { HelperRequest } from './metric-suite-helper';
import type { CalibratorsRequest } from './calibrators-request';
import type { CalibratorComparison } from '../../../src-shared/calibrators';
import {
  copyLogitRows,
  scoresOfShared,
  sharedSuiteArrays,
  sharedTopLabelArrays,
  takeSuiteWork,
} from './shared-suite-arrays';

type TaskResults = Array<[string, MetricValue[]]>;
type HelperAnswer = TaskResults | FusedScoreTableParts | CalibratorComparison;

/**
 * The full metric suite on two threads, the same values as metricSuite (src-shared) bit for bit:
 * 1. the softmax, per-sample terms and top-label pairs, rows split in two shares, one per thread
 *    (logits not already in shared memory: the helper's rows copied there in chunks, each handed
 *    over when ready);
 * 2. both threads take work from a shared counter (metric-suite.ts's tasks, longest first) until
 *    none is left;
 * 3. the results are put in the suite's order.
 * Logits already in a SharedArrayBuffer are read in place; others are copied once.
 * Below PARALLEL_MIN_SAMPLES the copies and messages cost more than they save, and the suite runs
 * here alone; so it does when the helper cannot start (it then says why once, in `fallback`).
 */
export const PARALLEL_MIN_SAMPLES = 50_000;

/** Chunks of the helper's rows, each handed over once ready. */
const ROW_CHUNKS = 8;

/**
 * This thread's share of the rows when it copies the helper's logits into shared memory first:
 * copying a row costs about r = 0.11 of scoring it (80 bytes at ~4 GB/s against ~180 ns), and both
 * threads finish together when f = (1 - r) / (2 - r).
 */
const COPYING_SHARE = 0.47;

/** A helper's failure as null (its tasks are then redone on this thread). */
const helperFailed = (): null => null;

/** Waits for every answer, then fails with the first failure (none is left in flight). */
async function allAnswered(answers: Array<Promise<TaskResults>>): Promise<TaskResults> {
  const settled = await Promise.allSettled(answers);
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return [];
}

export class ParallelMetricSuite {
  private helper: ThreadChannel<HelperRequest, HelperAnswer> | null = null;
  /** Why the last computation ran on one thread, or null when it used both. */
  fallback: string | null = null;
  /** Helper threads started so far (one, unless a helper failed and was replaced). */
  helperStarts = 0;
  /** The shared copy of the last caller's logits, reused when the next ones have the same shape. */
  private spareLogits: LogitArray | null = null;
  /** Computations run one after another (the helper serves one at a time). */
  private queue: Promise<unknown> = Promise.resolve();

  private ensureHelper(): ThreadChannel<HelperRequest, HelperAnswer> {
    if (this.helper !== null && this.helper.endedWith === null) return this.helper;
    const worker = startEntryWorker(import.meta.url, 'metric-suite-helper');
    this.helperStarts++;
    worker.unref();
    // a shared cancel flag per call: a calibrator share polls it and stops within a step
    this.helper = new ThreadChannel(worker, 'the metric suite helper', { sharedCancel: true });
    return this.helper;
  }

  /** The helper that answered its first request (answering): work handed to it runs at once. */
  private answered: ThreadChannel<HelperRequest, HelperAnswer> | null = null;

  /**
   * Waits until the helper serves (once per thread started): a thread still starting needs this
   * thread's event loop, so work handed to it before the synchronous work done alongside here began
   * only once that had finished (the two halves ran one after the other).
   */
  private async answering(): Promise<void> {
    const helper = this.ensureHelper();
    if (this.answered === helper) return;
    await helper.call({ kind: 'ping' });
    this.answered = helper;
  }

  private ask(request: Exclude<HelperRequest, { kind: 'table-rows' }>): Promise<TaskResults> {
    return this.ensureHelper().call(request) as Promise<TaskResults>;
  }

  /**
   * Starts some methods of a calibrator comparison on the helper once it answers, and gives the
   * comparison's promise in a box (a promise resolved with a promise would wait for it; the caller
   * fits the other methods meanwhile). Not queued: the metrics worker runs one request at a time,
   * and the caller awaits the answer before it returns.
   */
  async startCalibrators(
    comparison: CalibratorsRequest,
    signal?: AbortSignal,
  ): Promise<{ answer: Promise<CalibratorComparison> }> {
    await this.answering();
    const answer = this.ensureHelper().call({ kind: 'calibrators', comparison }, { signal });
    return { answer: answer as Promise<CalibratorComparison> };
  }

  /**
   * A share of a recording's fused-score table, built on the helper from logits in shared memory
   * (table-rows.ts), while the caller builds the rows before it. Rejects when the helper cannot
   * start or fails (the caller then builds the share itself).
   */
  tableRows(request: TableRowsRequest): Promise<FusedScoreTableParts> {
    return this.queued(async () => {
      await this.answering();
      return (await this.ensureHelper().call({ kind: 'table-rows', rows: request })) as FusedScoreTableParts;
    });
  }

  /**
   * Runs `mine` here while the helper answers `theirs`; waits for the helper even when `mine`
   * throws, so it has stopped touching the shared arrays before the next computation reuses them.
   */
  private async alongside<T, U>(theirs: Promise<U>, mine: () => T): Promise<[T, U]> {
    let result: T;
    try {
      result = mine();
    } catch (error) {
      await theirs.catch(() => undefined);
      throw error;
    }
    return [result, await theirs];
  }

  /** The suite of softmax(logits) against labels (validated as scoresFromLogits does). */
  fromLogits(
    logits: LogitArray,
    classCount: number,
    labels: ArrayLike<number>,
    options: MetricSuiteOptions = {},
  ): Promise<{ scores: ClassScores; metrics: MetricValue[] }> {
    return this.queued(async () => {
      const checkedLabels = checkedShapeAndLabels(logits, classCount, labels);
      const oneThread = () => {
        const scores = scoresFromLogits(logits, classCount, checkedLabels);
        return { scores, metrics: metricSuite(scores, options) };
      };
      return this.compute({ logits, scores: null }, checkedLabels, classCount, options, oneThread);
    });
  }

  /** The suite of scores already validated and computed (scoresFromLogits or scoresFromProbabilities). */
  fromScores(scores: ClassScores, options: MetricSuiteOptions = {}): Promise<MetricValue[]> {
    return this.queued(async () => {
      const oneThread = () => ({ scores, metrics: metricSuite(scores, options) });
      // scores built by hand with logits but no per-sample NLL would need the logits in the
      // helper: they are computed here alone
      if (scores.logits !== null && scores.sampleNll === null) {
        this.fallback = 'scores with logits but no per-sample NLL';
        return oneThread().metrics;
      }
      return (await this.compute({ scores }, scores.labels, scores.classCount, options, oneThread)).metrics;
    });
  }

  /**
   * The suite's top-label tasks (every task but the classwise one, which needs the n x K
   * probabilities: options.everyClass false) on the helper while `mine` runs here; then this
   * thread takes what tasks are left. The scores must hold their per-sample NLL and Brier terms.
   * Results by task key, the classwise one marked not computed (the caller's `mine` is for that).
   */
  topLabelTasksAlongside<T>(
    scores: ClassScores,
    top: TopLabelScores,
    mine: () => T,
    /** The binnings of the binned tasks (the suite's own when absent). */
    binnings?: BinningSpec[],
  ): Promise<{ mine: T; results: Map<string, MetricValue[]> }> {
    const options: MetricSuiteOptions = { everyClass: false, ...(binnings === undefined ? {} : { binnings }) };
    const allHere = () => new Map(suiteTasks(scores, top, options).map((t) => [t.key, t.run()]));
    const oneThread = () => ({ mine: mine(), results: allHere() });
    return this.queued(async () => {
      if (scores.sampleCount < PARALLEL_MIN_SAMPLES || scores.sampleNll === null || scores.sampleBrier === null) {
        this.fallback = `fewer than ${PARALLEL_MIN_SAMPLES} samples, or no per-sample terms`;
        return oneThread();
      }
      const arrays = sharedTopLabelArrays(scores, top);
      let theirs: Promise<TaskResults>;
      try {
        await this.answering();
        theirs = this.ask({ kind: 'work', arrays, options });
      } catch (error) {
        this.fallback = `the helper thread could not start (${error instanceof Error ? error.message : String(error)})`;
        return oneThread();
      }
      const [[result, taken], helped] = await this.alongside(theirs.catch(helperFailed), () => {
        const result = mine();
        return [result, takeSuiteWork(arrays, options)] as const;
      });
      if (helped === null) {
        // the helper failed: what it had taken is redone here
        this.fallback = 'the helper thread failed';
        const helper = this.helper;
        this.helper = null;
        await helper?.close();
        return { mine: result, results: allHere() };
      }
      this.fallback = null;
      return { mine: result, results: new Map([...taken, ...helped]) };
    });
  }

  /**
   * topLabelScoresOfFrames (trace-scores.ts: the fused output of a trace of many classes, scored a
   * frame at a time) on both threads, the same bits: this thread scores the first half of the
   * frames while the helper scores the rest, reading the trace's logits in place. Logits not in
   * shared memory (readTraceFile's are), fewer than PARALLEL_MIN_SAMPLES frames, or a helper that
   * cannot start or fails: this thread scores them all.
   */
  topLabelScoresOfFrames(
    trace: Trace,
    g: Float64Array,
    frames: Int32Array,
  ): Promise<{ scores: ClassScores; top: TopLabelScores }> {
    const oneThread = () => topLabelScoresOfFrames(trace, g, frames);
    return this.queued(async () => {
      const n = frames.length;
      if (trace.labels === null || n < PARALLEL_MIN_SAMPLES || !logitsShared(trace.zStatic, trace.zDyn)) {
        this.fallback = `fewer than ${PARALLEL_MIN_SAMPLES} frames, or logits not in shared memory`;
        return oneThread();
      }
      const rows = sharedFusedRows({ ...trace, labels: trace.labels }, g, frames);
      const split = n >> 1;
      let theirs: Promise<TaskResults>;
      try {
        await this.answering();
        theirs = this.ask({ kind: 'fused-rows', rows, from: split, to: n });
      } catch (error) {
        this.fallback = `the helper thread could not start (${error instanceof Error ? error.message : String(error)})`;
        return oneThread();
      }
      const [, helped] = await this.alongside(theirs.catch(helperFailed), () => scoreFusedShare(rows, 0, split));
      if (helped === null) {
        this.fallback = 'the helper thread failed';
        const helper = this.helper;
        this.helper = null;
        await helper?.close();
        scoreFusedShare(rows, split, n);
      } else this.fallback = null;
      const { sampleNll, sampleBrier, top } = rows.out;
      return { scores: topLabelOnlyScores(trace.classCount, rows.labels, sampleNll, sampleBrier), top };
    });
  }

  private queued<T>(run: () => Promise<T>): Promise<T> {
    const result = this.queue.then(run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private async compute(
    input: Parameters<typeof sharedSuiteArrays>[0],
    labels: Int32Array,
    classCount: number,
    options: MetricSuiteOptions,
    oneThread: () => { scores: ClassScores; metrics: MetricValue[] },
  ): Promise<{ scores: ClassScores; metrics: MetricValue[] }> {
    const n = labels.length;
    if (n < PARALLEL_MIN_SAMPLES) {
      this.fallback = `fewer than ${PARALLEL_MIN_SAMPLES} samples`;
      return oneThread();
    }
    const arrays = sharedSuiteArrays(input, labels, classCount, this.spareLogits);
    const copying = input.scores === null && arrays.helperLogits !== input.logits;
    if (copying) this.spareLogits = arrays.helperLogits;
    // This thread's share of the rows: half, or less when it copies the helper's logits first.
    const split = Math.floor(n * (copying ? COPYING_SHARE : 0.5));
    try {
      await this.answering();
      // The helper's rows in chunks, each sent once copied, so the helper starts on the first
      // while this thread copies the rest.
      const chunks: Array<Promise<TaskResults>> = [];
      for (let from = split; from < n; from += Math.ceil((n - split) / ROW_CHUNKS)) {
        const to = Math.min(n, from + Math.ceil((n - split) / ROW_CHUNKS));
        if (input.scores === null) copyLogitRows(arrays, input.logits, from, to);
        chunks.push(this.ask({ kind: 'rows', arrays, from, to }));
      }
      await this.alongside(allAnswered(chunks), () => {
        // this thread reads its rows from the caller's logits, wherever they are
        if (input.scores === null) scoreRowsInto(input.logits, arrays.labels, classCount, 0, split, arrays);
        else topLabelRowsInto(arrays.probabilities, arrays.labels, classCount, 0, split, arrays.top);
      });
      const [mine, theirs] = await this.alongside(this.ask({ kind: 'work', arrays, options }), () =>
        takeSuiteWork(arrays, options),
      );
      this.fallback = null;
      const scores = scoresOfShared(arrays, input.scores === null ? input.logits : input.scores.logits);
      return { scores, metrics: assembleSuite(scores, options, new Map([...mine, ...theirs])) };
    } catch (error) {
      // bad input found on either share is the caller's error; anything else (INTERNAL: the
      // helper failed, exited or could not start) is the helper's, and the suite runs here alone
      if (error instanceof KnobError && error.code !== 'INTERNAL') throw error;
      this.fallback = `the helper thread failed (${error instanceof Error ? error.message : String(error)})`;
      const helper = this.helper;
      this.helper = null;
      await helper?.close();
      return oneThread();
    }
  }

  async close(): Promise<void> {
    this.spareLogits = null;
    const helper = this.helper;
    this.helper = null;
    await helper?.close();
  }
}
