import { availableParallelism } from 'node:os';
import type { CancelSignal } from '../../../src-shared/cancel-signal';
import type { PairedDifference } from '../../../src-shared/metrics/headline-intervals';
import type { Trace } from '../../../src-shared/trace/trace';
import {
  tune,
  tuningFrames,
  type ImprovementArgs,
  type TuningEvaluator,
  type TuningFigures,
  type TuningMetric,
  type TuningPoint,
  type TuningRequest,
  type TuningResult,
  type TuningRunOptions,
} from '../../../src-shared/tuning';
import { startEntryWorker } from '../workers/entry-worker';
import { ThreadChannel } from '../workers/worker-channel';
import type { TuningWorkerRequest } from './tuning-worker';

/**
 * The tuner's evaluator on worker threads (one per core, at most `threads`): each holds a copy of
 * the trace and its own TuningObjective; a batch of settings is dealt out round-robin (neighbouring
 * settings cost alike) and the figures come back in the batch's order. The event loop stays free
 * while they work, so the backend answers the desk during a tune.
 */
export interface TuningPool {
  evaluate: TuningEvaluator;
  /** tuningImprovement on the first thread (the bootstrap takes seconds for SmoothECE). */
  improvement: (...args: ImprovementArgs) => Promise<PairedDifference>;
  threads: number;
  close(): Promise<void>;
}

/** Only what the objective reads travels to the threads (not the features or metadata). */
function tuningColumns(trace: Trace): Trace {
  return { ...trace, metadata: {}, features: undefined };
}

export async function startTuningPool(
  trace: Trace,
  /** The frames the search scores (tuningFrames(...).search). */
  frames: Int32Array,
  metric: TuningMetric,
  threads = Math.max(1, Math.min(availableParallelism(), 8)),
  /** Aborting ends every thread at once; whatever waits on them answers CANCELLED. */
  signal?: CancelSignal,
): Promise<TuningPool> {
  // the threads' work is synchronous: a cancelled request ends its thread, releasing the core
  const pool = Array.from(
    { length: threads },
    () =>
      new ThreadChannel<TuningWorkerRequest, unknown>(
        startEntryWorker(import.meta.url, 'tuning-worker'),
        'a tuning thread',
        {
          cancelEndsThread: true,
        },
      ),
  );
  const close = async () => {
    await Promise.all(pool.map((thread) => thread.close()));
  };
  try {
    const columns = tuningColumns(trace);
    await Promise.all(pool.map((thread) => thread.call({ kind: 'init', trace: columns, frames, metric }, { signal })));
  } catch (error) {
    await close();
    throw error;
  }
  const evaluate: TuningEvaluator = async (points: TuningPoint[]) => {
    const shares = pool.map((_, t) => points.filter((_, i) => i % pool.length === t));
    const answers = await Promise.all(
      pool.map((thread, t) =>
        shares[t]!.length === 0
          ? []
          : (thread.call({ kind: 'evaluate', points: shares[t]! }, { signal }) as Promise<TuningFigures[]>),
      ),
    );
    return points.map((_, i) => answers[i % pool.length]![Math.floor(i / pool.length)]!);
  };
  const improvement = (...args: ImprovementArgs) =>
    pool[0]!.call({ kind: 'improvement', args }, { signal }) as Promise<PairedDifference>;
  return { evaluate, improvement, threads, close };
}

/** tune() with its settings evaluated on the pool's threads; the pool is closed after. */
export async function tuneOnThreads(
  trace: Trace,
  request: TuningRequest,
  current: TuningPoint,
  options: Omit<TuningRunOptions, 'evaluate'> & { threads?: number } = {},
): Promise<TuningResult & { threads: number; wallMs: number }> {
  const started = performance.now();
  const pool = await startTuningPool(
    trace,
    tuningFrames(trace, request.split, request.searchOn).search,
    request.metric,
    options.threads,
    options.signal,
  );
  try {
    const result = await tune(trace, request, current, {
      ...options,
      evaluate: pool.evaluate,
      improvement: pool.improvement,
    });
    return { ...result, threads: pool.threads, wallMs: performance.now() - started };
  } finally {
    await pool.close();
  }
}
