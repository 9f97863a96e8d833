import type { Worker } from 'node:worker_threads';
import { Correlator } from '../../../src-shared/api/correlator';
import type { ApiResult, MetricsOptions } from '../../../src-shared/api/contract';
import { KnobError, type KnobErrorPayload } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import type { CalibrationMethod, CalibratorSpec, HeldOutSplit } from '../../../src-shared/calibrators';
import type { Comparison, RecentRunTrace, RunsComparison, Snapshot } from './metrics-snapshot';

type CalibratorsComparison = Omit<ApiResult<'calibrator.compare'>, 'computeMs'>;
import type { MetricsRequest } from './metrics-worker';
import { startEntryWorker } from '../workers/entry-worker';

/**
 * The backend's handle on the metrics worker (started on first use, restarted after a failure).
 * Traces are transferred when the caller hands over a copy of its own, so a snapshot of a long
 * recording costs no copy on the way in. A cancelled call is rejected at once; the worker's answer
 * to it, when it comes, is dropped.
 */
export type MetricsResult =
  | { kind: 'snapshot'; snapshot: Snapshot }
  | { kind: 'compare'; comparison: Comparison }
  | { kind: 'runs'; comparison: RunsComparison }
  | { kind: 'calibrators'; comparison: CalibratorsComparison };

export type MetricsReply =
  | { id: number; ok: true; result: MetricsResult; computeMs: number }
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

/** A request before the client gives it its id. */
type RequestBody = MetricsRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;

/** What every request says: the recording (a copy the worker takes over) and where it came from. */
export interface RecordingCopy {
  /** A copy of the recording's trace: its buffers move to the worker. */
  trace: Trace;
  version: number;
  recordingId: number;
  /** The output calibrator the views apply after fusion. */
  calibrator: CalibratorSpec | null;
  signal?: AbortSignal;
}

export class MetricsWorkerClient {
  private worker: Worker | null = null;
  private readonly calls = new Correlator<{ result: MetricsResult; computeMs: number }>();

  private ensure(): Worker {
    if (this.worker !== null) return this.worker;
    const worker = startEntryWorker(import.meta.url, 'metrics-worker');
    worker.on('message', (reply: MetricsReply) => {
      if (reply.ok) this.calls.resolve(reply.id, reply);
      else this.calls.reject(reply.id, KnobError.fromPayload(reply.error));
    });
    const fail = (reason: string): void => {
      // A worker already ended by close() fails nothing here: close() settled its calls, and the
      // table may by now hold calls sent to the worker that replaced it.
      if (this.worker !== worker) return;
      this.worker = null;
      this.calls.failAll(new KnobError('INTERNAL', `metrics worker stopped: ${reason}`));
    };
    worker.on('error', (error) => fail(error.message));
    worker.on('exit', (code) => fail(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }

  private request(message: RequestBody, signal: AbortSignal | undefined, what: string) {
    const worker = this.ensure();
    const traces = message.kind === 'runs' ? [message.a.trace, message.b.trace] : [message.trace];
    return this.calls.call(
      (id) => worker.postMessage({ ...message, id } as MetricsRequest, traces.flatMap(transferables)),
      {
        signal,
        what,
        // The worker computes one request at a time and cannot be interrupted: a cancelled call that
        // leaves nothing else waiting ends it (the next call starts a fresh one), so abandoned work
        // stops instead of running on. With other calls waiting it finishes, and its answer is dropped.
        onCancel: () => {
          if (this.calls.size === 0 && this.worker === worker) void this.close();
        },
      },
    );
  }

  /** The calibration snapshot of a recording at one setting. */
  async snapshot(recording: RecordingCopy, settings: GateSettings, options: MetricsOptions): Promise<Snapshot> {
    const { trace, version, recordingId, calibrator, signal } = recording;
    const reply = await this.request(
      { kind: 'snapshot', trace, version, recordingId, calibrator, settings, options },
      signal,
      'the metrics',
    );
    if (reply.result.kind !== 'snapshot')
      throw new KnobError('INTERNAL', 'the metrics worker answered a snapshot with a comparison');
    return reply.result.snapshot;
  }

  /** A/B of a recording at two settings, with the paired differences. */
  async compare(
    recording: RecordingCopy,
    a: GateSettings,
    b: GateSettings,
    lastFrames?: number,
  ): Promise<Comparison & { computeMs: number }> {
    const { trace, version, recordingId, calibrator, signal } = recording;
    const reply = await this.request(
      { kind: 'compare', trace, version, recordingId, calibrator, a, b, lastFrames },
      signal,
      'the comparison',
    );
    if (reply.result.kind !== 'compare')
      throw new KnobError('INTERNAL', 'the metrics worker answered a comparison with a snapshot');
    return { ...reply.result.comparison, computeMs: reply.computeMs };
  }

  /** Calibrators fitted on a recording's fused output at `settings`, compared on held-out frames. */
  async compareCalibrators(
    recording: RecordingCopy,
    settings: GateSettings,
    request: { methods: CalibrationMethod[]; split: HeldOutSplit; lastFrames?: number },
  ): Promise<ApiResult<'calibrator.compare'>> {
    const { trace, version, recordingId, calibrator, signal } = recording;
    const reply = await this.request(
      { kind: 'calibrators', trace, version, recordingId, calibrator, settings, ...request },
      signal,
      'the calibrator comparison',
    );
    if (reply.result.kind !== 'calibrators')
      throw new KnobError(
        'INTERNAL',
        `the metrics worker answered a calibrator comparison with a ${reply.result.kind}`,
      );
    return { ...reply.result.comparison, computeMs: reply.computeMs };
  }

  /** Two recent runs (traces the worker takes over), each at its recorded settings. */
  async compareRuns(
    a: RecentRunTrace,
    b: RecentRunTrace,
    signal?: AbortSignal,
  ): Promise<RunsComparison & { computeMs: number }> {
    const reply = await this.request({ kind: 'runs', a, b }, signal, 'the comparison of two runs');
    if (reply.result.kind !== 'runs')
      throw new KnobError('INTERNAL', `the metrics worker answered a runs comparison with a ${reply.result.kind}`);
    return { ...reply.result.comparison, computeMs: reply.computeMs };
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker === null) return;
    this.calls.failAll(new KnobError('INTERNAL', 'metrics worker stopped: closed'));
    await worker.terminate();
  }
}
