import type { Transferable } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { CancelSignal } from '../../../src-shared/cancel-signal';
import {
  partsOverRanges,
  type PairedDifference,
  type PairedDifferenceParts,
} from '../../../src-shared/metrics/paired-differences';
import type { Trace } from '../../../src-shared/trace/trace';
import { labelledFrames } from '../../../src-shared/trace/trace-scores';
import {
  FusedScoreTable,
  labelLogitsOf,
  type FusedScoreTableParts,
} from '../../../src-shared/fusion/fused-score-table';
import {
  improvementFromParts,
  labelsOf,
  tune,
  tuningFrames,
  fusedTablesMessage,
  tablesNeedSquares,
  usesFusedTables,
  type FusedTables,
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
 *
 * With many classes (fused-tables.ts) the threads first build the labelled frames' fused-score
 * tables together, a chunk of rows each at a time, and every thread then reads the one merged copy
 * in shared memory; the threads' traces carry no K-wide logits at all. A trace read from a file
 * holds its logits in shared memory (readTraceFile; the desk passes them on, Recording.copySharing):
 * the threads read the chunk's rows there. Other traces (a live recording's, or a file of several
 * record batches, whose logits are in plain memory) send each chunk's rows, copied.
 */
export interface TuningPool {
  evaluate: TuningEvaluator;
  /** tuningImprovement on the first thread (the bootstrap takes seconds for SmoothECE). */
  improvement: (...args: ImprovementArgs) => Promise<PairedDifference>;
  threads: number;
  close(): Promise<void>;
}

/**
 * Only what the objective reads travels to the threads (not the features or metadata; with tables,
 * not the logits either).
 */
function tuningColumns(trace: Trace, withLogits: boolean): Trace {
  const columns = { ...trace, metadata: {}, features: undefined };
  return withLogits ? columns : { ...columns, zStatic: new Float32Array(0), zDyn: new Float32Array(0) };
}

/** Rows per table-building request: small enough that only a little of the trace is in flight. */
const TABLE_CHUNK_FRAMES = 2048;

/** Copies `array` into shared memory, so every thread reads the one copy. */
function shared<T extends Float64Array | Int32Array>(array: T, make: (buffer: SharedArrayBuffer) => T): T {
  const copy = make(new SharedArrayBuffer(Math.max(array.byteLength, 8)));
  copy.set(array);
  return copy;
}

/** The chunk's logit rows of both branches, copied (row j is frame rows[j]). */
function chunkLogits(
  trace: Trace,
  rows: Int32Array,
): { zStatic: Float32Array<ArrayBuffer>; zDyn: Float32Array<ArrayBuffer> } {
  const k = trace.classCount;
  const zStatic = new Float32Array(rows.length * k);
  const zDyn = new Float32Array(rows.length * k);
  rows.forEach((row, j) => {
    zStatic.set(trace.zStatic.subarray(row * k, (row + 1) * k), j * k);
    zDyn.set(trace.zDyn.subarray(row * k, (row + 1) * k), j * k);
  });
  return { zStatic, zDyn };
}

/** The fused-score tables of the labelled frames at each temperature, built on the pool's threads. */
async function buildTables(
  pool: ThreadChannel<TuningWorkerRequest, unknown>[],
  trace: Trace,
  temperatures: number[],
  squares: boolean,
  signal: CancelSignal | undefined,
  onProgress: (done: number, total: number, stage: string) => void,
): Promise<FusedTables> {
  const frames = labelledFrames(trace);
  const k = trace.classCount;
  // copying the chunks (826 MiB into fresh pages, at one temperature) took the event loop 1.7 s for
  // an hour of 1,000 classes (profiled 2026-12-07), while the threads waited on it
  const logitsShared =
    trace.zStatic.buffer instanceof SharedArrayBuffer && trace.zDyn.buffer instanceof SharedArrayBuffer;
  const chunks: Int32Array[] = [];
  for (let from = 0; from < frames.length; from += TABLE_CHUNK_FRAMES)
    chunks.push(frames.subarray(from, from + TABLE_CHUNK_FRAMES));
  const total = chunks.length * temperatures.length;
  let done = 0;
  const byTemperature = new Map<number, FusedScoreTable>();
  for (const temperature of temperatures) {
    const parts: FusedScoreTableParts[] = new Array(chunks.length);
    // each thread takes the next chunk as it finishes one
    let next = 0;
    await Promise.all(
      pool.map(async (thread) => {
        while (next < chunks.length) {
          const index = next++;
          const rows = chunks[index]!;
          const copied = logitsShared ? null : chunkLogits(trace, rows);
          const request = {
            kind: 'table' as const,
            rows: rows.slice(),
            logitRows: copied === null ? ('trace' as const) : ('chunk' as const),
            zStatic: copied?.zStatic ?? trace.zStatic,
            zDyn: copied?.zDyn ?? trace.zDyn,
            classCount: k,
            temperature,
            squares,
          };
          // shared memory travels as itself; a chunk's copies are handed over
          const transfer: Transferable[] = [request.rows.buffer];
          if (copied !== null) transfer.push(copied.zStatic.buffer, copied.zDyn.buffer);
          parts[index] = (await thread.call(request, { signal, transfer })) as FusedScoreTableParts;
          onProgress(++done, total, 'fused scores of the labelled frames');
        }
      }),
    );
    byTemperature.set(
      temperature,
      FusedScoreTable.merge(k, temperature, parts, (bytes) => new SharedArrayBuffer(bytes)),
    );
  }
  const labelLogits = labelLogitsOf(trace, frames, labelsOf(trace, frames));
  return {
    frames: shared(frames, (b) => new Int32Array(b)),
    labelLogits: {
      zStatic: shared(labelLogits.zStatic, (b) => new Float64Array(b)),
      zDyn: shared(labelLogits.zDyn, (b) => new Float64Array(b)),
    },
    byTemperature,
  };
}

export async function startTuningPool(
  trace: Trace,
  /** The frames the search scores, and their screened stride (tuningFrames). */
  frames: { search: Int32Array; screened: Int32Array | null },
  metric: TuningMetric,
  threads = Math.max(1, Math.min(availableParallelism(), 8)),
  /** Aborting ends every thread at once; whatever waits on them answers CANCELLED. */
  signal?: CancelSignal,
  /** The output temperatures the tune visits (the tables are built for each). */
  temperatures: number[] = [1],
  onProgress: (done: number, total: number, stage: string) => void = () => undefined,
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
    const tables = usesFusedTables(metric, trace.classCount)
      ? await buildTables(pool, trace, temperatures, tablesNeedSquares(metric), signal, onProgress)
      : null;
    const columns = tuningColumns(trace, tables === null);
    const message = tables === null ? null : fusedTablesMessage(tables, trace.classCount);
    await Promise.all(
      pool.map((thread) => thread.call({ kind: 'init', trace: columns, frames, metric, tables: message }, { signal })),
    );
  } catch (error) {
    await close();
    throw error;
  }
  const evaluate: TuningEvaluator = async (points: TuningPoint[], on) => {
    const shares = pool.map((_, t) => points.filter((_, i) => i % pool.length === t));
    const answers = await Promise.all(
      pool.map((thread, t) =>
        shares[t]!.length === 0
          ? []
          : (thread.call({ kind: 'evaluate', points: shares[t]!, on }, { signal }) as Promise<TuningFigures[]>),
      ),
    );
    return points.map((_, i) => answers[i % pool.length]![Math.floor(i / pool.length)]!);
  };
  // each thread makes an even share of the bootstrap's replicates, each the resample it is in the
  // whole run (bootstrap.ts's replicateRange): each range's draws taken from the thread that made
  // them are the one-thread improvement's, bit for bit
  const improvement = async (...args: ImprovementArgs): Promise<PairedDifference> => {
    const [frames, metric, current, best, resampling] = args;
    const { replicates } = resampling;
    const shares = pool.map((_, t) => ({
      from: Math.floor((t * replicates) / pool.length),
      to: Math.floor(((t + 1) * replicates) / pool.length),
    }));
    const parts = (await Promise.all(
      pool.map((thread, t) =>
        thread.call(
          { kind: 'improvement', args: [frames, metric, current, best, { ...resampling, replicateRange: shares[t]! }] },
          { signal },
        ),
      ),
    )) as PairedDifferenceParts[];
    return improvementFromParts(metric, partsOverRanges(parts, shares, replicates), resampling);
  };
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
  const temperatures = [...new Set([current.temperature, ...(request.temperatures ?? [])])];
  // the threads score the search frames and their screened stride, never the held-out ones
  const { search, screened } = tuningFrames(trace, request.split, request.searchOn, request.screening);
  const pool = await startTuningPool(
    trace,
    { search, screened },
    request.metric,
    options.threads,
    options.signal,
    temperatures,
    (done, total, stage) => options.onProgress?.(done, total, stage),
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
