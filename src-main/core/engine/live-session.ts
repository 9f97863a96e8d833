import type { CorruptionSchedule } from '../../../src-shared/corruptions';
import { KnobError, toErrorPayload, type KnobErrorPayload } from '../../../src-shared/errors';
import type { FrameGeometry } from '../../../src-shared/frames/fit-frame';
import { createFramePreparer } from '../../../src-shared/frames/prepare-frames';
import { fuseRowInto } from '../../../src-shared/fusion/convex-fusion';
import { frameReadout, type FrameReadout } from '../../../src-shared/fusion/frame-readout';
import { softmaxRowInto } from '../../../src-shared/fusion/logits';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { CalibrationAccumulator, SlidingWindowCalibration } from '../../../src-shared/metrics/streaming';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';
import { GateReplayer } from '../../../src-shared/trace/replay';
import { allocateBatchMetadata, TraceBuilder } from '../../../src-shared/trace/trace-builder';
import { UNKNOWN_LABEL } from '../../../src-shared/trace/trace';
import type { InferenceClient } from '../inference/inference-client';
import { LatencyRecorder, type LatencyReport } from './latency-recorder';

/**
 * The live path (camera, video played in real time): one frame in flight to the inference process,
 * the latest submitted frame waiting behind it (an older waiting frame is dropped and counted),
 * gate and fusion stepped frame by frame with the same GateReplayer as offline replay, streaming
 * metrics updated per labelled frame, and updates to the UI throttled to at most `maxEventHz`
 * (a trailing update always carries the latest frame). Knob changes are staged and applied between
 * frames, and each frame records the settings version it used. A crash of the inference process
 * loses only the frame in flight (counted as dropped); the gate state lives here and continues.
 */
export const ROLLING_WINDOW_FRAMES = 300;
/** Memory for the recent frames kept for scrubbing (28 x 28 frames: about 85,000 of them). */
export const IMAGE_MEMORY_BYTES = 64 * 1024 * 1024;

export interface LiveUpdate {
  frame: number;
  timestampSeconds: number;
  settingsVersion: number;
  g: number;
  uRef: number;
  label: number | null;
  readout: FrameReadout;
  framesProcessed: number;
  framesDropped: number;
  endToEndMs: number;
  metrics: MetricValue[];
  /** Exact accuracy and mean confidence over the last ROLLING_WINDOW_FRAMES labelled frames. */
  rolling: MetricValue[];
  /** The frame the model saw (fitted and corrupted), and its corruption. */
  image: { width: number; height: number; channels: 1 | 3; pixels: Uint8Array };
  corruption: string | null;
  severity: number;
}

export interface LiveSessionOptions {
  client: InferenceClient;
  settings: GateSettings;
  settingsVersion?: number;
  schedule: CorruptionSchedule;
  streamSeed: number;
  nominalFrameRateHz: number;
  hasLabels: boolean;
  maxEventHz?: number;
  topK?: number;
  onUpdate?: (update: LiveUpdate) => void;
  onError?: (error: KnobErrorPayload) => void;
}

interface Waiting {
  frame: Uint8Array;
  geometry: FrameGeometry;
  timestampSeconds: number;
  label: number;
  submittedAt: number;
  submissionIndex: number;
}

export class LiveSession {
  readonly builder: TraceBuilder;
  private readonly replayer: GateReplayer;
  private readonly preparer;
  private readonly metadata = allocateBatchMetadata(1);
  private readonly accumulator: CalibrationAccumulator;
  private readonly window: SlidingWindowCalibration;
  private readonly latency = new LatencyRecorder();
  private readonly probabilities: Float64Array;
  private readonly fusedLogits: Float64Array;
  private readonly timestamp = new Float64Array(1);
  private readonly label = new Int32Array(1);
  private waiting: Waiting | null = null;
  private busy = false;
  private staged: { settings: GateSettings; version: number } | null = null;
  private resetRequested = false;
  private dropped = 0;
  private submitted = 0;
  private lastEmit = -Infinity;
  private trailing: ReturnType<typeof setTimeout> | null = null;
  private lastEndToEndMs = 0;
  private idleWaiters: Array<() => void> = [];
  private closed = false;
  private lastImage: Uint8Array = new Uint8Array(0);
  /** The most recent frames as the model saw them, for scrubbing (a ring of IMAGE_MEMORY_BYTES). */
  private images: Uint8Array;
  private readonly imageSlots: number;
  private lastCorruption: string | null = null;
  private lastSeverity = 0;

  constructor(private readonly options: LiveSessionOptions) {
    const model = options.client.description;
    const spec = model.input;
    this.preparer = createFramePreparer(
      { width: spec.width, height: spec.height, channels: spec.channels },
      options.schedule,
      options.streamSeed,
    );
    this.builder = new TraceBuilder(
      model.classCount,
      model.labelNames,
      1 / options.nominalFrameRateHz,
      options.hasLabels,
    );
    this.replayer = new GateReplayer(options.settings, options.settingsVersion ?? 0);
    this.accumulator = new CalibrationAccumulator({ classCount: model.classCount });
    this.window = new SlidingWindowCalibration(ROLLING_WINDOW_FRAMES, { classCount: model.classCount });
    this.probabilities = new Float64Array(model.classCount);
    const frameBytes = spec.width * spec.height * spec.channels;
    this.imageSlots = Math.max(1, Math.floor(IMAGE_MEMORY_BYTES / frameBytes));
    this.images = new Uint8Array(0);
    this.fusedLogits = new Float64Array(model.classCount);
  }

  /** Offers a frame; if one is already waiting, the older one is dropped (latest wins). */
  submit(frame: Uint8Array, geometry: FrameGeometry, timestampSeconds: number, label: number = UNKNOWN_LABEL): void {
    if (this.closed) throw new KnobError('CANCELLED', 'the live session is closed');
    this.submitted++;
    if (this.waiting !== null) this.dropped++;
    this.waiting = {
      frame,
      geometry,
      timestampSeconds,
      label,
      submittedAt: performance.now(),
      submissionIndex: this.submitted - 1,
    };
    if (!this.busy) void this.pump();
  }

  /** Staged; the next frame to be processed uses it (retuning is bumpless: (g, v) are kept). */
  setSettings(settings: GateSettings, version: number): void {
    this.staged = { settings, version };
  }

  /** Back to rest at g0 before the next frame. */
  resetGate(): void {
    this.resetRequested = true;
  }

  get framesDropped(): number {
    return this.dropped;
  }

  get framesProcessed(): number {
    return this.builder.frameCount;
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
      await this.process(job);
    }
    this.busy = false;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private async process(job: Waiting): Promise<void> {
    const spec = this.options.client.description.input;
    const index = this.builder.frameCount;
    const previous = index > 0 ? this.builder.trace.timestampsSeconds[index - 1] : -Infinity;
    if (!(job.timestampSeconds > previous && Number.isFinite(job.timestampSeconds))) {
      this.dropped++;
      this.options.onError?.({
        code: 'INVALID_INPUT',
        message: `frame timestamp ${job.timestampSeconds} s does not increase (previous ${previous} s); frame dropped`,
      });
      return;
    }
    const prepared = new Uint8Array(spec.width * spec.height * spec.channels);
    const prepStarted = performance.now();
    try {
      this.preparer.prepare(job.frame, job.geometry, 1, index, job.submissionIndex, prepared, this.metadata);
    } catch (error) {
      this.options.onError?.(toErrorPayload(error));
      this.dropped++;
      return;
    }
    const prepMs = performance.now() - prepStarted;
    const corruption = this.metadata.corruption[0];
    const severity = this.metadata.severity[0];
    let outputs;
    try {
      outputs = await this.options.client.run(prepared, 1, index);
    } catch (error) {
      this.dropped++;
      this.options.onError?.(toErrorPayload(error));
      return;
    }
    if (this.closed) return;
    const gateStarted = performance.now();
    if (this.staged !== null) {
      this.replayer.setSettings(this.staged.settings, this.staged.version);
      this.staged = null;
    }
    if (this.resetRequested) {
      this.replayer.resetState();
      this.resetRequested = false;
    }
    this.timestamp[0] = job.timestampSeconds;
    this.label[0] = job.label;
    this.builder.append(
      1,
      outputs.zStatic,
      outputs.zDyn,
      outputs.uRef,
      this.timestamp,
      this.builder.trace.labels === null ? null : this.label,
      this.metadata,
    );
    this.replayer.advance(this.builder.trace, index, index + 1, this.builder.output);
    const trace = this.builder.trace;
    const k = trace.classCount;
    if (trace.labels !== null && job.label !== UNKNOWN_LABEL) {
      fuseRowInto(trace.zStatic, trace.zDyn, index * k, k, this.builder.output.g[index], this.fusedLogits, 0);
      softmaxRowInto(this.fusedLogits, 0, k, this.probabilities, 0);
      this.accumulator.update(this.probabilities, 0, job.label, 1);
      this.window.push(this.probabilities, 0, job.label);
    }
    const done = performance.now();
    this.lastImage = prepared;
    this.keepImage(index, prepared);
    this.lastCorruption = corruption;
    this.lastSeverity = severity;
    this.lastEndToEndMs = done - job.submittedAt;
    this.latency.record(prepMs + outputs.preprocessMs, outputs.inferenceMs, done - gateStarted, this.lastEndToEndMs);
    this.scheduleUpdate();
  }

  private keepImage(frame: number, pixels: Uint8Array): void {
    const size = pixels.length;
    const slot = frame % this.imageSlots;
    if (this.images.length < (slot + 1) * size) {
      // Grow by doubling up to the ring's full size, so short streams use little memory.
      const next = new Uint8Array(Math.min(this.imageSlots, Math.max(64, 2 * (slot + 1))) * size);
      next.set(this.images);
      this.images = next;
    }
    this.images.set(pixels, slot * size);
  }

  /** A recorded frame's pixels while it is still in the ring (the last IMAGE_MEMORY_BYTES of frames). */
  recordedImage(frame: number): { width: number; height: number; channels: 1 | 3; pixels: Uint8Array } | null {
    const { width, height, channels } = this.preparer.target;
    const size = width * height * channels;
    if (frame < 0 || frame >= this.builder.frameCount || frame <= this.builder.frameCount - 1 - this.imageSlots)
      return null;
    const slot = frame % this.imageSlots;
    return { width, height, channels, pixels: this.images.slice(slot * size, (slot + 1) * size) };
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
    if (this.options.onUpdate === undefined || this.builder.frameCount === 0 || this.closed) return;
    this.lastEmit = performance.now();
    const i = this.builder.frameCount - 1;
    const trace = this.builder.trace;
    const output = this.builder.output;
    const label = trace.labels === null ? null : trace.labels[i];
    this.options.onUpdate({
      frame: i,
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
      ),
      framesProcessed: this.builder.frameCount,
      framesDropped: this.dropped,
      endToEndMs: this.lastEndToEndMs,
      metrics: this.accumulator.sampleCount > 0 ? this.accumulator.exactMetrics() : [],
      rolling: this.window.accumulator.accuracyAndConfidence(`last ${this.window.sampleCount} labelled frames`),
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
  }
}
