import type { Worker } from 'node:worker_threads';
import { Correlator } from '../../../src-shared/api/correlator';
import type { MetricsOptions } from '../../../src-shared/api/contract';
import { KnobError, type KnobErrorPayload } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import type { Snapshot } from './metrics-snapshot';
import type { MetricsRequest } from './metrics-worker';
import { startEntryWorker } from '../workers/entry-worker';

/**
 * The backend's handle on the metrics worker (started on first use, restarted after a failure).
 * Traces are transferred when the caller hands over a copy of its own, so a snapshot of a long
 * recording costs no copy on the way in. A cancelled call is rejected at once; the worker's answer
 * to it, when it comes, is dropped.
 */
export type MetricsReply =
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

export interface SnapshotRequest {
  trace: Trace;
  settings: GateSettings[];
  version: number;
  recordingId: number;
  options: MetricsOptions;
  /** The trace's buffers move to the worker (the caller must not use them afterwards). */
  transfer: boolean;
  signal?: AbortSignal;
}

export class MetricsWorkerClient {
  private worker: Worker | null = null;
  private readonly calls = new Correlator<{ snapshots: Snapshot[]; computeMs: number }>();

  private ensure(): Worker {
    if (this.worker !== null) return this.worker;
    const worker = startEntryWorker(import.meta.url, 'metrics-worker');
    worker.on('message', (reply: MetricsReply) => {
      if (reply.ok) this.calls.resolve(reply.id, reply);
      else this.calls.reject(reply.id, KnobError.fromPayload(reply.error));
    });
    const fail = (reason: string): void => {
      if (this.worker === worker) this.worker = null;
      this.calls.failAll(new KnobError('INTERNAL', `metrics worker stopped: ${reason}`));
    };
    worker.on('error', (error) => fail(error.message));
    worker.on('exit', (code) => fail(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }

  /** Snapshots of one trace for each setting. */
  snapshots(request: SnapshotRequest): Promise<{ snapshots: Snapshot[]; computeMs: number }> {
    const worker = this.ensure();
    const { trace, settings, version, recordingId, options } = request;
    return this.calls.call(
      (id) => {
        const message: MetricsRequest = { id, trace, settings, version, recordingId, options };
        worker.postMessage(message, request.transfer ? transferables(trace) : []);
      },
      { signal: request.signal, what: 'the metrics computation' },
    );
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker !== null) await worker.terminate();
  }
}
