import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { KnobError, type KnobErrorPayload } from '../../../src-shared/errors';
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

type Reply = { ok: true; value: unknown } | { ok: false; error: KnobErrorPayload };

class PoolThread {
  private readonly waiting: Array<(reply: Reply) => void> = [];
  private failure: KnobError | null = null;

  constructor(readonly worker: Worker) {
    worker.on('message', (reply: Reply) => this.waiting.shift()?.(reply));
    const fail = (error: KnobError) => {
      this.failure = error;
      for (const resolve of this.waiting.splice(0))
        resolve({ ok: false, error: { code: error.code, message: error.message } });
    };
    worker.on('error', (error) => fail(new KnobError('INTERNAL', `a tuning thread failed: ${error.message}`)));
    worker.on('messageerror', (error) =>
      fail(new KnobError('INTERNAL', `a tuning thread's reply could not be read: ${error.message}`)),
    );
    worker.on('exit', (code) => fail(new KnobError('INTERNAL', `a tuning thread exited (code ${code})`)));
  }

  async send(request: TuningWorkerRequest): Promise<unknown> {
    if (this.failure !== null) throw this.failure;
    const reply = await new Promise<Reply>((resolve) => {
      this.waiting.push(resolve);
      this.worker.postMessage(request);
    });
    if (!reply.ok) throw new KnobError(reply.error.code, reply.error.message);
    return reply.value;
  }
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
): Promise<TuningPool> {
  const pool = Array.from(
    { length: threads },
    () => new PoolThread(startEntryWorker(import.meta.url, 'tuning-worker')),
  );
  const close = async () => {
    await Promise.all(pool.map((thread) => thread.worker.terminate()));
  };
  try {
    const columns = tuningColumns(trace);
    await Promise.all(pool.map((thread) => thread.send({ kind: 'init', trace: columns, frames, metric })));
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
          : (thread.send({ kind: 'evaluate', points: shares[t]! }) as Promise<TuningFigures[]>),
      ),
    );
    return points.map((_, i) => answers[i % pool.length]![Math.floor(i / pool.length)]!);
  };
  const improvement = (...args: ImprovementArgs) =>
    pool[0]!.send({ kind: 'improvement', args }) as Promise<PairedDifference>;
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
