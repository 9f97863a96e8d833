import type { CorruptionSchedule } from '../../../src-shared/corruptions';
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
import type { InferenceClient } from '../inference/inference-client';
import { Recording } from '../recording/recording';
import type { StoredProvenance } from '../report/provenance';
import { LatencyRecorder, type LatencyReport } from './latency-recorder';

/**
 * The live path (camera, video or dataset played in real time) into a live Recording: one frame in
 * flight to the inference process, the latest submitted frame waiting behind it (an older waiting
 * frame is dropped and counted), each frame fitted and corrupted, then appended to the recording,
 * which steps the gate over it with the same GateReplayer as an offline replay. Updates to the UI
 * are throttled to at most `maxEventHz` (a trailing update always carries the latest frame). Knob
 * changes are staged and applied between frames, and each frame records the settings version it
 * used. A crash of the inference process loses only the frame in flight (counted as dropped); the
 * gate state lives here and continues.
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

export class LivePipeline {
  readonly recording: Recording;
  private readonly replayer: GateReplayer;
  private preparer;
  private stagedSchedule: { schedule: CorruptionSchedule; seed: number } | null = null;
  private acceptWaiters: Array<() => void> = [];
  private readonly metadata = allocateBatchMetadata(1);
  private readonly latency = new LatencyRecorder();
  private readonly timestamp = new Float64Array(1);
  private readonly label = new Int32Array(1);
  private waiting: Waiting | null = null;
  private busy = false;
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
  }

  /**
   * Offers a frame; if one is already waiting, the older one is dropped (latest wins).
   * `sourceFrame` is the frame's index in its source (the submission count for a camera).
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
    if (!this.busy) void this.pump();
  }

  /**
   * Staged; the next frame to be processed uses them (retuning is bumpless: (g, v) are kept). The
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
    if (!this.busy && this.waiting === null) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async pump(): Promise<void> {
    this.busy = true;
    while (this.waiting !== null && !this.closed) {
      const job = this.waiting;
      this.waiting = null;
      for (const resolve of this.acceptWaiters.splice(0)) resolve();
      try {
        await this.process(job);
      } catch (error) {
        // whatever a frame's processing throws is reported as that frame's error: the pump (and
        // the process) keep running
        this.options.onError?.(toErrorPayload(error));
      }
    }
    this.busy = false;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private drop(error: KnobErrorPayload): void {
    this.recording.framesDropped++;
    this.options.onError?.(error);
  }

  private async process(job: Waiting): Promise<void> {
    const spec = this.options.client.description.input;
    const trace = this.recording.trace;
    const index = trace.frameCount;
    const previous = index > 0 ? trace.timestampsSeconds[index - 1] : -Infinity;
    if (!(job.timestampSeconds > previous && Number.isFinite(job.timestampSeconds))) {
      this.drop({
        code: 'INVALID_INPUT',
        message: `frame timestamp ${job.timestampSeconds} s does not increase (previous ${previous} s); frame dropped`,
      });
      return;
    }
    if (this.stagedSchedule !== null) {
      const { schedule, seed } = this.stagedSchedule;
      this.preparer = createFramePreparer(this.preparer.target, schedule, seed);
      this.recording.noteSchedule(index, schedule, seed);
      this.stagedSchedule = null;
    }
    const prepared = new Uint8Array(spec.width * spec.height * spec.channels);
    const prepStarted = performance.now();
    try {
      this.preparer.prepare(job.frame, job.geometry, 1, index, job.sourceFrame, prepared, this.metadata);
    } catch (error) {
      this.drop(toErrorPayload(error));
      return;
    }
    const prepMs = performance.now() - prepStarted;
    let outputs;
    try {
      // the recording says whether it keeps the model's features (source.open's recordFeatures)
      outputs = await this.options.client.run(prepared, 1, index, {
        keepFeatures: this.recording.trace.features !== undefined,
      });
    } catch (error) {
      this.drop(toErrorPayload(error));
      return;
    }
    if (this.closed) return;
    const gateStarted = performance.now();
    if (this.staged !== null) {
      this.replayer.setSettings(this.staged.settings, this.staged.version);
      this.replayer.setCalibrator(this.staged.calibrator);
      this.calibrator = this.staged.calibrator;
      this.staged = null;
    }
    if (this.resetRequested) {
      this.replayer.resetState();
      this.resetRequested = false;
    }
    this.timestamp[0] = job.timestampSeconds;
    this.label[0] = job.label;
    this.recording.appendFrame(outputs, this.timestamp, this.label, this.metadata, this.replayer, prepared);
    const done = performance.now();
    this.lastImage = prepared;
    this.lastCorruption = this.metadata.corruption[0];
    this.lastSeverity = this.metadata.severity[0];
    this.lastSourceFrame = job.sourceFrame;
    this.lastEndToEndMs = done - job.submittedAt;
    this.latency.record(prepMs + outputs.preprocessMs, outputs.inferenceMs, done - gateStarted, this.lastEndToEndMs);
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
      ),
      framesProcessed: recording.frameCount,
      framesDropped: recording.framesDropped,
      endToEndMs: this.lastEndToEndMs,
      rolling: recording.rolling(),
      image: { ...this.preparer.target, pixels: this.lastImage },
      corruption: this.lastCorruption,
      severity: this.lastSeverity,
    });
  }

  close(): void {
    this.closed = true;
    if (this.trailing !== null) clearTimeout(this.trailing);
    this.waiting = null;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
    for (const resolve of this.acceptWaiters.splice(0)) resolve();
  }
}
