import type { CorruptionSchedule } from '../../../src-shared/corruptions';
import type { DriftAlarm } from '../../../src-shared/drift';
import { KnobError, toErrorPayload, type KnobErrorPayload } from '../../../src-shared/errors';
import type { FrameGeometry } from '../../../src-shared/frames/fit-frame';
import { createFramePreparer } from '../../../src-shared/frames/prepare-frames';
import type { Calibrator } from '../../../src-shared/calibrators/output-calibrator';
import { frameReadout, type FrameReadout } from '../../../src-shared/trace/frame-readout';
import { frameFeatures } from '../../../src-shared/trace/trace-scores';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../../src-shared/gate/gate-settings';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';
import { GateReplayer } from '../../../src-shared/trace/replay';
import { allocateBatchMetadata } from '../../../src-shared/trace/trace-builder';
import { UNKNOWN_LABEL } from '../../../src-shared/trace/trace';
import type { InferenceClient, TimedBranchOutputs } from '../inference/inference-client';
import { Recording } from '../recording/recording';
import type { StoredProvenance } from '../report/provenance';
import { LatencyRecorder, type LatencyReport } from './latency-recorder';

/**
 * The live path (camera, video or dataset played in real time) into a live Recording. Up to
 * `framesInFlight` frames are at the inference process at once (by default as many as it runs at
 * once, `concurrentRuns`: one per onnxruntime session, so every core works), and the latest
 * submitted frame waits behind them (an older waiting frame is dropped and counted). Each frame is
 * fitted and corrupted when it goes in flight, in submission order, and its outputs are appended in
 * that same order however the runs finish, so the recording steps the gate over the stream exactly
 * as a one-at-a-time pipeline would, with the same GateReplayer as an offline replay. Updates to the
 * UI are throttled to at most `maxEventHz` (a trailing update always carries the latest frame). Knob
 * changes are staged and applied between frames as they are appended, and each frame records the
 * settings version it used. A crash of the inference process loses only the frames in flight
 * (counted as dropped); the gate state lives here and continues.
 */
export interface LiveUpdate {
  recordingId: number;
  frame: number;
  sourceFrame: number;
  timestampSeconds: number;
  settingsVersion: number;
  g: number;
  uRef: number;
  label: number | null;
  readout: FrameReadout;
  framesProcessed: number;
  framesDropped: number;
  endToEndMs: number;
  /** Exact accuracy and mean confidence over the recording's last labelled frames. */
  rolling: MetricValue[];
  /** The frame the model saw (fitted and corrupted), and its corruption. */
  image: { width: number; height: number; channels: 1 | 3; pixels: Uint8Array };
  corruption: string | null;
  severity: number;
  /** Drift alarms the recording's live watch raised since the last update (none without a watch). */
  driftAlarms: Array<DriftAlarm & { seconds: number }>;
  /** How the recording's live watch stands (null: none was armed). */
  driftWatch: { watching: boolean; fromFrame: number; alarmCount: number; stoppedBecause: string | null } | null;
}

export interface LivePipelineOptions {
  client: InferenceClient;
  recording: Recording;
  settings: GateSettings;
  settingsVersion?: number;
  /** The output calibrator applied after fusion (none: the fused output). */
  calibrator?: Calibrator | null;
  schedule: CorruptionSchedule;
  streamSeed: number;
  maxEventHz?: number;
  topK?: number;
  /** Frames at the inference process at once; default its `concurrentRuns`. */
  framesInFlight?: number;
  onUpdate?: (update: LiveUpdate) => void;
  onError?: (error: KnobErrorPayload) => void;
}

/**
 * A live pipeline filling a new live recording of its own (no calibrator), at the default knobs on
 * the clean stream unless told otherwise: how the engine bench and the engine's tests drive a live
 * stream. The desk's live recordings come from the session's recording factory instead, with their
 * id, calibrator and run provenance.
 */
export function livePipelineOnNewRecording(
  options: Partial<Omit<LivePipelineOptions, 'client' | 'recording'>> & {
    client: InferenceClient;
    description: string;
    provenance: StoredProvenance;
    frameRateHz: number;
  },
): LivePipeline {
  const { client, description, provenance, frameRateHz, ...pipeline } = options;
  const recording = Recording.live({ id: 1, description, provenance }, client.description, frameRateHz);
  return new LivePipeline({
    settings: DEFAULT_GATE_SETTINGS,
    schedule: { kind: 'none' },
    streamSeed: 0,
    ...pipeline,
    client,
    recording,
  });
}

interface Waiting {
  frame: Uint8Array;
  geometry: FrameGeometry;
  timestampSeconds: number;
  label: number;
  sourceFrame: number;
  submittedAt: number;
}

/** A frame prepared and sent to the inference process, waiting for its turn to be appended. */
interface InFlight {
  job: Waiting;
  prepared: Uint8Array;
  metadata: ReturnType<typeof allocateBatchMetadata>;
  prepMs: number;
  /** Settles with the outputs, or with the error that drops the frame (never rejects). */
  outputs: Promise<TimedBranchOutputs | { error: KnobErrorPayload }>;
}

export class LivePipeline {
  readonly recording: Recording;
  private readonly replayer: GateReplayer;
  private preparer;
  private stagedSchedule: { schedule: CorruptionSchedule; seed: number } | null = null;
  private acceptWaiters: Array<() => void> = [];
  private readonly maxInFlight: number;
  /** One metadata row per slot: a slot is reused only after its frame was appended (FIFO). */
  private readonly metadataSlots: Array<ReturnType<typeof allocateBatchMetadata>>;
  private sent = 0;
  private readonly inFlight: InFlight[] = [];
  /** The most frames that were in flight at once. */
  peakFramesInFlight = 0;
  private readonly latency = new LatencyRecorder();
  private readonly timestamp = new Float64Array(1);
  private readonly label = new Int32Array(1);
  private waiting: Waiting | null = null;
  private appending = false;
  private lastSentTimestampSeconds = -Infinity;
  private staged: { settings: GateSettings; version: number; calibrator: Calibrator | null } | null = null;
  private calibrator: Calibrator | null;
  private resetRequested = false;
  private submitted = 0;
  private lastEmit = -Infinity;
  private trailing: ReturnType<typeof setTimeout> | null = null;
  private lastEndToEndMs = 0;
  private idleWaiters: Array<() => void> = [];
  private closed = false;
  private lastImage: Uint8Array = new Uint8Array(0);
  private lastCorruption: string | null = null;
  private lastSeverity = 0;
  private lastSourceFrame = 0;

  constructor(private readonly options: LivePipelineOptions) {
    const spec = options.client.description.input;
    this.recording = options.recording;
    this.preparer = createFramePreparer(
      { width: spec.width, height: spec.height, channels: spec.channels },
      options.schedule,
      options.streamSeed,
    );
    this.calibrator = options.calibrator ?? null;
    this.replayer = new GateReplayer(options.settings, options.settingsVersion ?? 0, this.calibrator);
    this.maxInFlight = Math.max(1, Math.floor(options.framesInFlight ?? options.client.description.concurrentRuns));
    this.metadataSlots = Array.from({ length: this.maxInFlight }, () => allocateBatchMetadata(1));
    // a live drift watch's alarms come back from its thread a batch later: they go out with an update
    this.recording.onDriftAlarms = this.alarmsArrived;
  }

  private readonly alarmsArrived = (): void => this.scheduleUpdate();

  /** Frames at the inference process at once, at most. */
  get framesInFlight(): number {
    return this.maxInFlight;
  }

  /**
   * Offers a frame; if every slot is in flight and one is already waiting, the older one is dropped
   * (latest wins). `sourceFrame` is the frame's index in its source (the submission count for a
   * camera).
   */
  submit(
    frame: Uint8Array,
    geometry: FrameGeometry,
    timestampSeconds: number,
    label: number = UNKNOWN_LABEL,
    sourceFrame: number = this.submitted,
  ): void {
    if (this.closed) throw new KnobError('CANCELLED', 'the live stream is closed');
    this.submitted++;
    if (this.waiting !== null) this.recording.framesDropped++;
    this.waiting = { frame, geometry, timestampSeconds, label, sourceFrame, submittedAt: performance.now() };
    this.sendWaiting();
  }

  /**
   * Staged; the next frame appended uses them (retuning is bumpless: (g, v) are kept). The
   * calibrator applies to the output from that frame on.
   */
  setSettings(settings: GateSettings, version: number, calibrator: Calibrator | null = this.calibrator): void {
    this.staged = { settings, version, calibrator };
  }

  /** A new corruption schedule, used from the next frame prepared (frame indices continue). */
  setSchedule(schedule: CorruptionSchedule, streamSeed: number): void {
    this.stagedSchedule = { schedule, seed: streamSeed };
  }

  /**
   * Resolves when no frame is waiting, so the next one submitted is processed rather than dropped:
   * what a file source waits for (it never drops frames), while a camera submits regardless.
   */
  whenAccepting(): Promise<void> {
    if (this.waiting === null || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.acceptWaiters.push(resolve));
  }

  /** Back to rest at g0 before the next frame. */
  resetGate(): void {
    this.resetRequested = true;
  }

  latencyReport(): LatencyReport {
    return this.latency.report();
  }

  /** Resolves when nothing is in flight or waiting. */
  idle(): Promise<void> {
    if (this.inFlight.length === 0 && this.waiting === null) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Idle, and the recording's drift watch has stepped every frame: its last alarms then go out
   * with the update `close` sends.
   */
  async drained(): Promise<void> {
    await this.idle();
    await this.recording.driftWatch?.settled();
  }

  /** Sends the waiting frame when a slot is free, and makes sure the appending loop runs. */
  private sendWaiting(): void {
    if (this.closed) return;
    if (this.waiting !== null && this.inFlight.length < this.maxInFlight) {
      const job = this.waiting;
      this.waiting = null;
      for (const resolve of this.acceptWaiters.splice(0)) resolve();
      try {
        this.send(job);
      } catch (error) {
        // whatever a frame's preparation throws is reported as that frame's error: the stream
        // (and the process) keep running
        this.drop(toErrorPayload(error));
      }
    }
    if (!this.appending && this.inFlight.length > 0) void this.appendInOrder();
    else this.notifyIdle();
  }

  private notifyIdle(): void {
    if (this.inFlight.length === 0 && this.waiting === null)
      for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private drop(error: KnobErrorPayload): void {
    this.recording.framesDropped++;
    this.options.onError?.(error);
  }

  /**
   * Prepares the frame at the stream position it will take (the frames already recorded and in
   * flight before it) and sends it. Should an earlier frame in flight then be dropped, the frames
   * behind it were prepared one position later than where they are appended; their recorded
   * corruption and severity are what they were prepared with.
   */
  private send(job: Waiting): void {
    const spec = this.options.client.description.input;
    const index = this.recording.trace.frameCount + this.inFlight.length;
    if (!(job.timestampSeconds > this.lastSentTimestampSeconds && Number.isFinite(job.timestampSeconds))) {
      this.drop({
        code: 'INVALID_INPUT',
        message: `frame timestamp ${job.timestampSeconds} s does not increase (previous ${this.lastSentTimestampSeconds} s); frame dropped`,
      });
      return;
    }
    if (this.stagedSchedule !== null) {
      const { schedule, seed } = this.stagedSchedule;
      this.preparer = createFramePreparer(this.preparer.target, schedule, seed);
      this.recording.noteSchedule(index, schedule, seed);
      this.stagedSchedule = null;
    }
    const metadata = this.metadataSlots[this.sent % this.maxInFlight];
    const prepared = new Uint8Array(spec.width * spec.height * spec.channels);
    const prepStarted = performance.now();
    this.preparer.prepare(job.frame, job.geometry, 1, index, job.sourceFrame, prepared, metadata);
    const prepMs = performance.now() - prepStarted;
    this.lastSentTimestampSeconds = job.timestampSeconds;
    this.sent++;
    // the recording says whether it keeps the model's features (source.open's recordFeatures)
    const outputs = this.options.client
      .run(prepared, 1, index, { keepFeatures: this.recording.trace.features !== undefined })
      .catch((error: unknown) => ({ error: toErrorPayload(error) }));
    this.inFlight.push({ job, prepared, metadata, prepMs, outputs });
    this.peakFramesInFlight = Math.max(this.peakFramesInFlight, this.inFlight.length);
  }

  /** Appends the frames in flight in the order they were sent, each as its outputs arrive. */
  private async appendInOrder(): Promise<void> {
    this.appending = true;
    while (this.inFlight.length > 0 && !this.closed) {
      const head = this.inFlight[0];
      const outputs = await head.outputs;
      this.inFlight.shift();
      if (this.closed) break;
      try {
        if ('error' in outputs) this.drop(outputs.error);
        else this.append(head, outputs);
      } catch (error) {
        this.options.onError?.(toErrorPayload(error));
      }
      this.sendWaiting();
    }
    this.appending = false;
    this.notifyIdle();
  }

  private append(head: InFlight, outputs: TimedBranchOutputs): void {
    const { job, prepared, metadata } = head;
    const gateStarted = performance.now();
    if (this.staged !== null) {
      this.replayer.setSettings(this.staged.settings, this.staged.version);
      this.replayer.setCalibrator(this.staged.calibrator);
      this.calibrator = this.staged.calibrator;
      this.staged = null;
    }
    if (this.resetRequested) {
      this.replayer.resetState();
      this.recording.restartConditionStream();
      this.resetRequested = false;
    }
    this.timestamp[0] = job.timestampSeconds;
    this.label[0] = job.label;
    this.recording.appendFrame(outputs, this.timestamp, this.label, metadata, this.replayer, prepared);
    const done = performance.now();
    this.lastImage = prepared;
    this.lastCorruption = metadata.corruption[0];
    this.lastSeverity = metadata.severity[0];
    this.lastSourceFrame = job.sourceFrame;
    this.lastEndToEndMs = done - job.submittedAt;
    this.latency.record(
      head.prepMs + outputs.preprocessMs,
      outputs.inferenceMs,
      done - gateStarted,
      this.lastEndToEndMs,
    );
    this.scheduleUpdate();
  }

  private scheduleUpdate(): void {
    const interval = 1000 / (this.options.maxEventHz ?? 30);
    const now = performance.now();
    if (now - this.lastEmit >= interval) {
      this.emit();
    } else if (this.trailing === null) {
      this.trailing = setTimeout(
        () => {
          this.trailing = null;
          this.emit();
        },
        interval - (now - this.lastEmit),
      );
    }
  }

  private emit(): void {
    const recording = this.recording;
    if (this.options.onUpdate === undefined || recording.frameCount === 0 || this.closed) return;
    this.lastEmit = performance.now();
    const i = recording.frameCount - 1;
    const trace = recording.trace;
    const output = recording.output;
    const label = trace.labels![i];
    this.options.onUpdate({
      recordingId: recording.id,
      frame: i,
      sourceFrame: this.lastSourceFrame,
      timestampSeconds: trace.timestampsSeconds[i],
      settingsVersion: output.settingsVersion[i],
      g: output.g[i],
      uRef: trace.uRef[i],
      label: label === UNKNOWN_LABEL ? null : label,
      readout: frameReadout(
        trace.zStatic,
        trace.zDyn,
        i * trace.classCount,
        trace.classCount,
        output.g[i],
        this.options.topK ?? 3,
        this.calibrator,
        frameFeatures(trace, i),
        this.calibrator?.condition === undefined ? undefined : this.replayer.appliedCondition,
      ),
      framesProcessed: recording.frameCount,
      framesDropped: recording.framesDropped,
      endToEndMs: this.lastEndToEndMs,
      rolling: recording.rolling(),
      image: { ...this.preparer.target, pixels: this.lastImage },
      corruption: this.lastCorruption,
      severity: this.lastSeverity,
      driftWatch: recording.driftWatch?.state() ?? null,
      driftAlarms: (recording.driftWatch?.takeNew() ?? []).map((alarm) => ({
        ...alarm,
        seconds: trace.timestampsSeconds[alarm.frame]!,
      })),
    });
  }

  close(): void {
    if (this.closed) return;
    // the trailing update goes out now: it carries the latest frame and any alarm raised since the last
    if (this.trailing !== null) {
      clearTimeout(this.trailing);
      this.trailing = null;
      this.emit();
    }
    this.closed = true;
    if (this.recording.onDriftAlarms === this.alarmsArrived) this.recording.onDriftAlarms = null;
    this.waiting = null;
    // frames still in flight are answered to no one
    this.inFlight.length = 0;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
    for (const resolve of this.acceptWaiters.splice(0)) resolve();
  }
}
