import type { ApiResult, MetricsOptions } from '../../../src-shared/api/contract';
import { KnobError } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import type { CalibrationMethod, CalibratorSpec, HeldOutSplit } from '../../../src-shared/calibrators';
import type { Comparison, RecentRunTrace, RunsComparison, Snapshot } from './metrics-snapshot';

type CalibratorsComparison = Omit<ApiResult<'calibrator.compare'>, 'computeMs'>;
import type { MetricsRequest } from './metrics-worker';
import { startEntryWorker } from '../workers/entry-worker';
import { ThreadChannel } from '../workers/worker-channel';

/**
 * The backend's handle on the metrics worker (started on first use, started again after it failed
 * or was closed), over the worker protocol (worker-protocol.ts).
 * Traces are transferred when the caller hands over a copy of its own, so a snapshot of a long
 * recording costs no copy on the way in. A cancelled call is rejected at once; the worker's answer
 * to it, when it comes, is dropped.
 */
export type MetricsResult =
  | { kind: 'snapshot'; snapshot: Snapshot }
  | { kind: 'compare'; comparison: Comparison }
  | { kind: 'runs'; comparison: RunsComparison }
  | { kind: 'calibrators'; comparison: CalibratorsComparison };

/** The worker's answer to a request (under the request's id, worker-protocol.ts). */
export interface MetricsAnswer {
  result: MetricsResult;
  computeMs: number;
}

function transferables(trace: Trace): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  const add = (array: { buffer: ArrayBufferLike } | null): void => {
    if (array !== null && array.buffer instanceof ArrayBuffer) buffers.add(array.buffer);
  };
  [trace.timestampsSeconds, trace.zStatic, trace.zDyn, trace.uRef, trace.labels].forEach(add);
  for (const column of Object.values(trace.metadata)) add(column.kind === 'category' ? column.codes : column.values);
  return [...buffers];
}

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
  /** The worker's channel; each worker has its own, so one that dies fails only its own calls. */
  private thread: ThreadChannel<MetricsRequest, MetricsAnswer> | null = null;

  private ensure(): ThreadChannel<MetricsRequest, MetricsAnswer> {
    if (this.thread !== null && this.thread.endedWith === null) return this.thread;
    this.thread = new ThreadChannel(startEntryWorker(import.meta.url, 'metrics-worker'), 'the metrics worker');
    return this.thread;
  }

  private request(message: MetricsRequest, signal: AbortSignal | undefined, what: string) {
    const thread = this.ensure();
    const traces = message.kind === 'runs' ? [message.a.trace, message.b.trace] : [message.trace];
    return thread.call(message, {
      signal,
      what,
      transfer: traces.flatMap(transferables),
      // The worker computes one request at a time and cannot be interrupted: a cancelled call that
      // leaves nothing else waiting ends it (the next call starts a fresh one), so abandoned work
      // stops instead of running on. With other calls waiting the worker is told: a cancelled
      // request still waiting its turn never runs, one already running finishes unanswered.
      onCancel: () => {
        if (thread.size === 0 && this.thread === thread) void this.close();
      },
    });
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
    const thread = this.thread;
    this.thread = null;
    await thread?.close(new KnobError('INTERNAL', 'the metrics worker was closed'));
  }
}
