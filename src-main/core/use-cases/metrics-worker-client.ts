import type { BinningChoice } from '../../../src-shared/metrics/binning-choice';
import type { ApiParsedParams, ApiResult, MetricsOptions } from '../../../src-shared/api/contract';
import { KnobError } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import type { CalibratorSpec } from '../../../src-shared/calibrators';
import type { Comparison, Snapshot } from './metrics-snapshot';
import type { ConformalSets } from './conformal-view';
import type { RecentRunTrace, RunsComparison } from './view-comparisons';

type CalibratorsComparison = Omit<ApiResult<'calibrator.compare'>, 'computeMs'>;
import type { MetricsRequest } from './metrics-worker';
import type { RecordingRows } from './held-recording';
import { startEntryWorker } from '../workers/entry-worker';
import { ThreadChannel } from '../workers/worker-channel';

/**
 * The backend's handle on the metrics worker (started on first use, started again after it failed
 * or was closed), over the worker protocol (worker-protocol.ts). The worker holds the current
 * recording (held-recording.ts): before a request the client sends the rows added since it last
 * sent that recording (the whole recording the first time, after a restart, or for another
 * recording), in a message no cancel drops, so a knob turn copies nothing K-wide. Recent runs'
 * traces are transferred with their request. A cancelled call is rejected at once; the worker's
 * answer to it, when it comes, is dropped.
 */
export type MetricsResult =
  | { kind: 'snapshot'; snapshot: Snapshot }
  | { kind: 'compare'; comparison: Comparison }
  | { kind: 'runs'; comparison: RunsComparison }
  | { kind: 'calibrators'; comparison: CalibratorsComparison }
  | { kind: 'conformal'; sets: ConformalSets };

/** The worker's answer to a request (under the request's id, worker-protocol.ts). */
export interface MetricsAnswer {
  result: MetricsResult;
  computeMs: number;
}

function transferables(trace: Trace): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  const add = (array: { buffer: ArrayBufferLike } | null | undefined): void => {
    if (array != null && array.buffer instanceof ArrayBuffer) buffers.add(array.buffer);
  };
  [trace.timestampsSeconds, trace.zStatic, trace.zDyn, trace.uRef, trace.labels, trace.features?.values].forEach(add);
  for (const column of Object.values(trace.metadata)) add(column.kind === 'category' ? column.codes : column.values);
  return [...buffers];
}

/** A recording the worker can be brought up to date with: copies of all of it, or of what came since. */
export interface RecordingSource {
  readonly frameCount: number;
  /** The whole trace: copies (their buffers move to the worker), or views of shared memory. */
  copyAll(): Trace;
  /** Copies of frames [from, frameCount) as a trace, and every frame's effective label. */
  copyFrom(from: number): { rows: Trace; labels: Int32Array | null };
}

/** What every request on the current recording says: the recording and where the view comes from. */
export interface RecordingCopy {
  recording: RecordingSource;
  version: number;
  recordingId: number;
  /** The output calibrator the views apply after fusion. */
  calibrator: CalibratorSpec | null;
  signal?: AbortSignal;
}

export class MetricsWorkerClient {
  /** The worker's channel; each worker has its own, so one that dies fails only its own calls. */
  private thread: ThreadChannel<MetricsRequest, MetricsAnswer | null> | null = null;
  /** The recording the worker holds, as far as this client has sent it. */
  private held: { recordingId: number; frames: number } | null = null;
  /** Workers started so far (a cancelled snapshot stops in its worker, which is kept). */
  workerStarts = 0;
  /** Workers that may still be running a cancelled call that does not poll its cancel flag. */
  private readonly cancelledUninterruptible = new WeakSet<object>();
  /** Rows messages each worker has not answered yet (they are not work a cancel could stop). */
  private readonly rowsPending = new WeakMap<object, number>();

  private ensure(): ThreadChannel<MetricsRequest, MetricsAnswer | null> {
    if (this.thread !== null && this.thread.endedWith === null) return this.thread;
    this.workerStarts++;
    // a cancelled view stops at its next resample (a shared flag): the worker keeps what it holds
    this.thread = new ThreadChannel(startEntryWorker(import.meta.url, 'metrics-worker'), 'the metrics worker', {
      sharedCancel: true,
    });
    this.held = null;
    return this.thread;
  }

  /** Sends the worker what it lacks of `copy`'s recording (nothing when it is up to date). */
  private sync(thread: ThreadChannel<MetricsRequest, MetricsAnswer | null>, copy: RecordingCopy): void {
    const { recording, recordingId } = copy;
    const held = this.held;
    let rows: RecordingRows;
    if (held !== null && held.recordingId === recordingId && held.frames <= recording.frameCount) {
      const { rows: added, labels } = recording.copyFrom(held.frames);
      rows = { recordingId, kind: 'append', from: held.frames, rows: added, labels };
    } else rows = { recordingId, kind: 'whole', trace: recording.copyAll() };
    const trace = rows.kind === 'whole' ? rows.trace : rows.rows;
    const transfer = transferables(trace);
    if (rows.kind === 'append' && rows.labels !== null && rows.labels.buffer instanceof ArrayBuffer)
      transfer.push(rows.labels.buffer);
    this.held = { recordingId, frames: recording.frameCount };
    // no signal: a cancel never drops the rows, so what the worker holds is what `held` says; a
    // worker that fails them ends (and the next call starts a fresh one, sent everything)
    this.rowsPending.set(thread, (this.rowsPending.get(thread) ?? 0) + 1);
    void thread
      .call({ kind: 'rows', rows }, { what: 'the recording for the metrics', transfer })
      .catch(() => {
        if (this.thread === thread) void this.close();
      })
      .finally(() => this.rowsPending.set(thread, (this.rowsPending.get(thread) ?? 1) - 1));
  }

  private request(
    message: MetricsRequest,
    signal: AbortSignal | undefined,
    what: string,
    copy?: RecordingCopy,
    onProgress?: (done: number, total: number, stage: string) => void,
  ) {
    const thread = this.ensure();
    if (copy !== undefined) this.sync(thread, copy);
    const traces = message.kind === 'runs' ? message.runs.map((r) => r.trace) : [];
    return thread.call(message, {
      signal,
      what,
      transfer: traces.flatMap(transferables),
      ...(onProgress === undefined ? {} : { onProgress: (p) => onProgress(p.done, p.total, p.stage) }),
      // The worker computes one request at a time. A snapshot or comparison reads the call's
      // shared cancel flag between resamples and table chunks, a calibrator comparison between
      // fits, so it stops within one of them and the worker keeps its recording and tables. Other work cannot be interrupted: a cancelled
      // call of it that leaves no other call waiting for a result ends the worker (the next call
      // starts a fresh one, sent the whole recording), so abandoned work stops instead of running
      // on (and once such work was cancelled, so does the cancel of the last call waiting, of
      // whatever kind); with other calls waiting a cancelled request still waiting its turn never
      // runs, one already running finishes unanswered.
      onCancel: () => {
        // a runs comparison replays every run before its first poll: cancelling one ends the worker
        const polls = message.kind !== 'rows' && message.kind !== 'runs';
        // uninterruptible work cancelled may still be running, whatever is cancelled after it
        if (!polls) this.cancelledUninterruptible.add(thread);
        if (polls && !this.cancelledUninterruptible.has(thread)) return;
        const waitingForResults = thread.size - (this.rowsPending.get(thread) ?? 0);
        if (waitingForResults === 0 && this.thread === thread) void this.close();
      },
    }) as Promise<MetricsAnswer>;
  }

  /** The calibration snapshot of a recording at one setting. */
  async snapshot(
    recording: RecordingCopy,
    settings: GateSettings,
    /** What the snapshot covers; an option left out is its default (MetricsOptionsSchema). */
    options: Partial<MetricsOptions>,
    /** Progress of the recording's fused-score tables being built (a long recording's first view). */
    onProgress?: (done: number, total: number, stage: string) => void,
  ): Promise<Snapshot> {
    const { version, recordingId, calibrator, signal } = recording;
    const reply = await this.request(
      { kind: 'snapshot', version, recordingId, calibrator, settings, options },
      signal,
      'the metrics',
      recording,
      onProgress,
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
    lastFrames: number | undefined,
    binning: BinningChoice,
  ): Promise<Comparison & { computeMs: number }> {
    const { version, recordingId, calibrator, signal } = recording;
    const reply = await this.request(
      { kind: 'compare', version, recordingId, calibrator, a, b, lastFrames, binning },
      signal,
      'the comparison',
      recording,
    );
    if (reply.result.kind !== 'compare')
      throw new KnobError('INTERNAL', 'the metrics worker answered a comparison with a snapshot');
    return { ...reply.result.comparison, computeMs: reply.computeMs };
  }

  /** Split-conformal prediction sets of a recording's output at `settings` (conformal-view.ts). */
  async conformalSets(
    recording: RecordingCopy,
    settings: GateSettings,
    request: ApiParsedParams<'conformal.sets'>,
  ): Promise<ApiResult<'conformal.sets'>> {
    const { version, recordingId, calibrator, signal } = recording;
    const reply = await this.request(
      { kind: 'conformal', version, recordingId, calibrator, settings, request },
      signal,
      'the prediction sets',
      recording,
    );
    if (reply.result.kind !== 'conformal')
      throw new KnobError('INTERNAL', `the metrics worker answered prediction sets with a ${reply.result.kind}`);
    return { ...reply.result.sets, computeMs: reply.computeMs };
  }

  /**
   * Calibrators fitted on a recording's fused output at `settings`, compared on held-out frames;
   * `onProgress` hears each method before its fit (done of total, and its name).
   */
  async compareCalibrators(
    recording: RecordingCopy,
    settings: GateSettings,
    request: ApiParsedParams<'calibrator.compare'>,
    onProgress?: (done: number, total: number, stage: string) => void,
  ): Promise<ApiResult<'calibrator.compare'>> {
    const { version, recordingId, calibrator, signal } = recording;
    const reply = await this.request(
      { kind: 'calibrators', version, recordingId, calibrator, settings, ...request },
      signal,
      'the calibrator comparison',
      recording,
      onProgress,
    );
    if (reply.result.kind !== 'calibrators')
      throw new KnobError(
        'INTERNAL',
        `the metrics worker answered a calibrator comparison with a ${reply.result.kind}`,
      );
    return { ...reply.result.comparison, computeMs: reply.computeMs };
  }

  /** Two to eight recent runs (traces the worker takes over), each at its recorded settings. */
  async compareRuns(runs: RecentRunTrace[], signal?: AbortSignal): Promise<RunsComparison & { computeMs: number }> {
    const reply = await this.request({ kind: 'runs', runs }, signal, 'the comparison of recent runs');
    if (reply.result.kind !== 'runs')
      throw new KnobError('INTERNAL', `the metrics worker answered a runs comparison with a ${reply.result.kind}`);
    return { ...reply.result.comparison, computeMs: reply.computeMs };
  }

  async close(): Promise<void> {
    const thread = this.thread;
    this.thread = null;
    this.held = null;
    await thread?.close(new KnobError('INTERNAL', 'the metrics worker was closed'));
  }
}
