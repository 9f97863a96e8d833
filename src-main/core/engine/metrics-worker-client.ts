import type { Worker } from 'node:worker_threads';
import { KnobError, type KnobErrorPayload } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import type { Grouping, Snapshot } from './metrics-snapshot';
import type { MetricsRequest } from './metrics-worker';
import { startEntryWorker } from '../workers/entry-worker';

/**
 * The backend's handle on the metrics worker (started on first use, restarted after a failure).
 * Traces are transferred when the caller hands over a copy of its own, so a snapshot of a long
 * recording costs no copy on the way in.
 */
type Reply =
  | { id: number; ok: true; snapshots: Snapshot[]; computeMs: number }
  | { id: number; ok: false; error: KnobErrorPayload };

function transferables(trace: Trace): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  const add = (array: { buffer: ArrayBufferLike } | null): void => {
    if (array !== null && array.buffer instanceof ArrayBuffer) buffers.add(array.buffer);
  };
  [trace.timestampsSeconds, trace.zStatic, trace.zDyn, trace.uRef, trace.labels].forEach(add);
  for (const column of Object.values(trace.metadata)) add(column.kind === 'category' ? column.codes : column.values);
  return [...buffers];
}

export class MetricsWorkerClient {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (reply: Reply & { ok: true }) => void; reject: (error: Error) => void }
  >();

  private ensure(): Worker {
    if (this.worker !== null) return this.worker;
    const worker = startEntryWorker(import.meta.url, 'metrics-worker');
    worker.on('message', (reply: Reply) => {
      const call = this.pending.get(reply.id);
      if (call === undefined) return;
      this.pending.delete(reply.id);
      if (reply.ok) call.resolve(reply);
      else call.reject(new KnobError(reply.error.code, reply.error.message));
    });
    const fail = (reason: string): void => {
      if (this.worker === worker) this.worker = null;
      for (const call of this.pending.values())
        call.reject(new KnobError('INTERNAL', `metrics worker stopped: ${reason}`));
      this.pending.clear();
    };
    worker.on('error', (error) => fail(error.message));
    worker.on('exit', (code) => fail(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }

  /**
   * Snapshots of one trace for each setting. With `transfer`, the trace's buffers move to the
   * worker (the caller must not use them afterwards).
   */
  async snapshots(
    trace: Trace,
    settings: GateSettings[],
    version: number,
    options: { lastFrames?: number; groupBy?: Grouping; detail?: 'full' | 'light' },
    transfer: boolean,
  ): Promise<{ snapshots: Snapshot[]; computeMs: number }> {
    const worker = this.ensure();
    const id = this.nextId++;
    const request: MetricsRequest = { id, trace, settings, version, options };
    const reply = await new Promise<Reply & { ok: true }>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage(request, transfer ? transferables(trace) : []);
    });
    return { snapshots: reply.snapshots, computeMs: reply.computeMs };
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker !== null) await worker.terminate();
  }
}
