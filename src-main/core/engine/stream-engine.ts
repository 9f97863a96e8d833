import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApiEventData, ApiResult, Knobs } from '../../../src-shared/api/contract';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { analyseRun, writeRunOutputs } from './run-outputs';
import type { Grouping } from './metrics-snapshot';
import { MetricsWorkerClient } from './metrics-worker-client';
import { SETTINGS_FILE_NAME, SETTINGS_FORMAT_VERSION } from '../recording/settings-file';
import type { CorruptionSchedule } from '../../../src-shared/corruptions';
import type { ModelDescription, ModelOptions } from '../../../src-shared/api/model-options';
import { decodeFramePacket } from '../../../src-shared/api/frame-packet';
import { KnobError, toErrorPayload, type KnobErrorPayload } from '../../../src-shared/errors';
import { DEFAULT_MODEL_PATH } from '../model-card/default-model';
import type { Trace } from '../../../src-shared/trace/trace';
import { InferenceClient } from '../inference/inference-client';
import { readTraceFile, writeTraceFile } from '../recording/trace-arrow';
import type { FrameSource, SourceInfo } from '../sources/frame-source';
import { openSource } from '../sources/open-source';
import { LiveSession, type LiveUpdate } from './live-session';
import { runOffline } from './offline-run';
import { replay } from '../../../src-shared/trace/replay';
import { frameReadout, type FrameReadout } from '../../../src-shared/fusion/frame-readout';

/**
 * The engine as the app drives it (Electron shell and browser host alike): one model in its
 * inference process, one source, one live session. A file source plays in real time at its
 * timestamps (frames the model cannot keep up with are dropped, latest wins); a camera source waits
 * for frames pushed over the binary path. Knob changes go to the session, which applies them
 * between frames. The recorded trace can be saved as Arrow, and a saved one loaded for replay.
 */
type Emit = <E extends 'stream.state' | 'stream.update' | 'work.progress'>(event: E, data: ApiEventData<E>) => void;

interface OpenedSource {
  kind: 'embedded' | 'dataset' | 'folder' | 'video' | 'camera';
  source: FrameSource | null;
  frameRateHz: number;
  schedule: CorruptionSchedule;
  seed: number;
}

const CHUNK = 32;

export class StreamEngine {
  private client: InferenceClient | null = null;
  private opened: OpenedSource | null = null;
  private session: LiveSession | null = null;
  private playing: AbortController | null = null;
  private loadedTrace: Trace | null = null;
  private lastError: KnobErrorPayload | null = null;
  private position = 0;
  private work: AbortController | null = null;
  private timeOffset = 0;
  private lastStreamTime = 0;
  private wrapped = false;
  private readonly metrics = new MetricsWorkerClient();

  constructor(
    private readonly emit: Emit,
    private readonly knobs: () => Knobs,
  ) {}

  async loadModel(options: ModelOptions): Promise<ModelDescription> {
    await this.stop();
    const resolved = options.path === 'default' ? { ...options, path: DEFAULT_MODEL_PATH } : options;
    const client = await InferenceClient.start(resolved, {
      onRestart: (notice) =>
        this.reportError({
          code: 'INFERENCE_CRASHED',
          message: `${notice.reason}; restarting in ${notice.delayMs} ms`,
        }),
    });
    await this.client?.close();
    this.client = client;
    this.discardSession();
    this.opened = null;
    return client.description;
  }

  modelInfo(): ModelDescription | null {
    return this.client?.description ?? null;
  }

  private requireModel(): InferenceClient {
    if (this.client === null) throw new KnobError('NOT_AVAILABLE', 'no model is loaded (model.load first)');
    return this.client;
  }

  async openSource(params: {
    kind: OpenedSource['kind'];
    path?: string;
    frameRateHz?: number;
    schedule?: CorruptionSchedule;
    seed?: number;
  }): Promise<ApiResult<'source.open'>> {
    const schedule = params.schedule ?? { kind: 'none' as const };
    const seed = params.seed ?? 0;
    const client = this.requireModel();
    await this.stop();
    this.discardSession();
    const model = client.description;
    if (params.kind === 'camera') {
      this.opened = { kind: 'camera', source: null, frameRateHz: params.frameRateHz ?? 30, schedule, seed };
      return {
        kind: 'camera',
        description: 'camera frames pushed by the renderer',
        frameCount: null,
        frameRateHz: this.opened.frameRateHz,
        hasLabels: false,
        labelNames: null,
        timestampSource: 'capture',
      };
    }
    const spec = params.kind === 'embedded' ? 'default' : params.path;
    if (spec === undefined) throw new KnobError('BAD_REQUEST', `a ${params.kind} source needs a path`);
    const source = await this.asWork(`opening ${spec}`, (signal, onProgress) =>
      openSource(spec, {
        target: model.input,
        frameRateHz: params.frameRateHz,
        labelNames: model.labelNames,
        signal,
        onProgress,
      }),
    );
    this.opened = { kind: params.kind, source, frameRateHz: source.info.frameRateHz, schedule, seed };
    return describeSource(params.kind, source.info);
  }

  /** Plays the open source from where it paused (a new recording if there is none), at `speed`. */
  async start(speed = 1, loop = false): Promise<ApiResult<'stream.start'>> {
    const client = this.requireModel();
    if (this.opened === null) throw new KnobError('NOT_AVAILABLE', 'no source is open (source.open first)');
    if (this.playing !== null) return this.emitState();
    this.lastError = null;
    if (this.session === null) {
      const knobs = this.knobs();
      const model = client.description;
      this.position = 0;
      this.session = new LiveSession({
        client,
        settings: knobs.gate,
        settingsVersion: knobs.version,
        schedule: this.opened.schedule,
        streamSeed: this.opened.seed,
        nominalFrameRateHz: this.opened.frameRateHz,
        // Always a label column: unlabelled streams (camera, video) take the operator's feedback.
        hasLabels: true,
        onUpdate: (update) => this.emit('stream.update', toApiUpdate(update, model.labelNames)),
        onError: (error) => this.reportError(error),
      });
    }
    if (this.opened.source !== null) void this.play(this.opened.source, this.session, speed, loop);
    else this.playing = new AbortController();
    return this.emitState();
  }

  /**
   * The whole file source through the model at full speed, batched (the analyst's offline pass):
   * the result becomes the current trace for metrics, A/B and export. Progress is reported about
   * ten times a second; work.cancel stops it and keeps the frames processed so far.
   */
  async runOfflineNow(maxFrames?: number): Promise<ApiResult<'stream.runOffline'>> {
    const client = this.requireModel();
    const opened = this.opened;
    const source = opened?.source;
    if (source == null || opened === null)
      throw new KnobError('NOT_AVAILABLE', 'an offline run needs an open file source (not a camera)');
    await this.stop();
    this.discardSession();
    const result = await this.asWork(`offline run of ${source.info.description}`, (signal, onProgress) =>
      runOffline({
        client,
        source,
        schedule: opened.schedule,
        streamSeed: opened.seed,
        settings: this.knobs().gate,
        batchSize: 256,
        maxFrames,
        signal,
        onProgress,
      }),
    );
    this.loadedTrace = result.trace;
    return { framesProcessed: result.framesProcessed, wallMs: result.wallMs, error: result.error };
  }

  /** Runs a long task as the one cancellable work, with progress events about ten times a second. */
  private async asWork<T>(
    task: string,
    run: (signal: AbortSignal, onProgress: (done: number, total: number | null) => void) => Promise<T>,
  ): Promise<T> {
    if (this.work !== null) throw new KnobError('NOT_AVAILABLE', 'another long task is running (cancel it first)');
    const controller = new AbortController();
    this.work = controller;
    let lastEmit = 0;
    let last = { done: 0, total: null as number | null };
    try {
      return await run(controller.signal, (done, total) => {
        last = { done, total };
        const now = performance.now();
        if (now - lastEmit < 100) return;
        lastEmit = now;
        this.emit('work.progress', { task, done, total, finished: false });
      });
    } finally {
      this.work = null;
      this.emit('work.progress', { task, done: last.done, total: last.total, finished: true });
    }
  }

  cancelWork(): ApiResult<'work.cancel'> {
    if (this.work === null) return { cancelled: false };
    this.work.abort();
    return { cancelled: true };
  }

  /** Back to frame 0 with a fresh recording, paused. */
  async rewind(): Promise<ApiResult<'stream.rewind'>> {
    await this.stop();
    this.discardSession();
    return this.emitState();
  }

  resetGate(): ApiResult<'stream.resetGate'> {
    this.session?.resetGate();
    return this.emitState();
  }

  private discardSession(): void {
    this.session?.close();
    this.session = null;
    this.position = 0;
    this.timeOffset = 0;
    this.wrapped = false;
  }

  /** Moves the source to a frame, paused, with a fresh recording (a recording's clock never goes back). */
  async seek(frame: number): Promise<ApiResult<'stream.seek'>> {
    if (this.opened?.source == null) throw new KnobError('NOT_AVAILABLE', 'seeking needs an open file source');
    await this.stop();
    this.discardSession();
    const count = this.opened.source.info.frameCount;
    this.position = count === null ? frame : Math.min(frame, Math.max(0, count - 1));
    return this.emitState();
  }

  /** One recorded frame replayed at the current knobs: what the live view showed, for scrubbing. */
  async recordedFrame(frame: number): Promise<ApiResult<'trace.frame'>> {
    if (this.session === null || frame >= this.session.framesProcessed)
      throw new KnobError(
        'INVALID_INPUT',
        `frame ${frame} is not recorded (${this.session?.framesProcessed ?? 0} frames)`,
      );
    const knobs = this.knobs();
    const trace = this.session.builder.trace;
    const view = { ...trace, frameCount: frame + 1 };
    const output = replay(view, knobs.gate);
    const model = this.requireModel().description;
    const readout = frameReadout(
      trace.zStatic,
      trace.zDyn,
      frame * trace.classCount,
      trace.classCount,
      output.g[frame],
      3,
    );
    const label = trace.labels?.[frame] ?? -1;
    const corruption = trace.metadata.corruption;
    const severity = trace.metadata.severity;
    const image = this.session.recordedImage(frame);
    return {
      frame,
      timestampSeconds: trace.timestampsSeconds[frame],
      settingsVersion: knobs.version,
      g: output.g[frame],
      uRef: trace.uRef[frame],
      label: label < 0 ? null : label,
      ...readoutToApi(readout, model.labelNames),
      corruption:
        corruption?.kind === 'category'
          ? corruption.dictionary[corruption.codes[frame]] === 'none'
            ? null
            : corruption.dictionary[corruption.codes[frame]]
          : null,
      severity: severity?.kind === 'number' ? severity.values[frame] : 0,
      image: image === null ? null : imageToApi(image),
    };
  }

  private async play(source: FrameSource, session: LiveSession, speed: number, loop: boolean): Promise<void> {
    const controller = new AbortController();
    this.playing = controller;
    this.emitState();
    const started = performance.now();
    const { width, height, channels } = source.info;
    const frameBytes = width * height * channels;
    const period = 1 / source.info.frameRateHz;
    try {
      let first: number | null = null;
      for (;;) {
        for await (const batch of source.batches(CHUNK, this.position)) {
          for (let i = 0; i < batch.count; i++) {
            if (controller.signal.aborted) return;
            // A loop continues the stream's clock: the next pass starts one frame period after the last frame.
            if (this.wrapped) {
              this.timeOffset = this.lastStreamTime + period - batch.timestampsSeconds[i];
              this.wrapped = false;
            }
            const t = batch.timestampsSeconds[i] + this.timeOffset;
            first ??= t;
            const wait = started + ((t - first) * 1000) / speed - performance.now();
            if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
            if (controller.signal.aborted) return;
            session.submit(
              batch.frames.subarray(i * frameBytes, (i + 1) * frameBytes),
              source.info,
              t,
              batch.labels?.[i] ?? -1,
            );
            this.lastStreamTime = t;
            this.position = batch.first + i + 1;
          }
        }
        if (!loop || controller.signal.aborted) break;
        this.position = 0;
        this.wrapped = true;
      }
      await session.idle();
    } catch (error) {
      this.reportError(toErrorPayload(error));
    } finally {
      if (this.playing === controller) this.playing = null;
      this.emitState();
    }
  }

  /** A camera frame from the binary path; refused unless a camera stream is running. */
  pushFrame(packet: Uint8Array): void {
    const frame = decodeFramePacket(packet);
    if (this.opened?.kind !== 'camera' || this.session === null || this.playing === null) {
      throw new KnobError('NOT_AVAILABLE', 'camera frames need an open camera source and a started stream');
    }
    this.session.submit(frame.pixels, frame, frame.timestampSeconds, frame.label);
  }

  async stop(): Promise<ApiResult<'stream.stop'>> {
    this.playing?.abort();
    this.playing = null;
    return this.emitState();
  }

  /** Knob changes reach the running session; it applies them between frames. */
  applyKnobs(knobs: Knobs): void {
    this.session?.setSettings(knobs.gate, knobs.version);
  }

  async saveTrace(path: string): Promise<ApiResult<'trace.save'>> {
    if (this.session === null || this.session.framesProcessed === 0)
      throw new KnobError('NOT_AVAILABLE', 'nothing recorded yet (start a stream first)');
    const trace = this.session.builder.snapshot();
    const knobs = this.knobs();
    await writeTraceFile(
      path,
      trace,
      { settings: knobs.gate, output: this.session.builder.snapshotOutput() },
      { model: this.client?.description.paths.join(' + ') ?? '' },
    );
    return { path, frameCount: trace.frameCount, classCount: trace.classCount };
  }

  async loadTrace(path: string): Promise<ApiResult<'trace.load'>> {
    const file = await readTraceFile(path);
    this.loadedTrace = file.trace;
    return { path, frameCount: file.trace.frameCount, classCount: file.trace.classCount };
  }

  /** The live recording (a fresh copy, owned by the caller) or else the loaded trace (shared). */
  private currentTrace(): { trace: Trace; owned: boolean } {
    if (this.session !== null && this.session.framesProcessed > 0)
      return { trace: this.session.builder.snapshot(), owned: true };
    if (this.loadedTrace === null)
      throw new KnobError('NOT_AVAILABLE', 'no trace yet (start a stream or load a trace)');
    return { trace: this.loadedTrace, owned: false };
  }

  /** Metrics of the current trace replayed at the current knobs, computed in the metrics worker. */
  async metricsSnapshot(
    options: { lastFrames?: number; groupBy?: Grouping; detail?: 'full' | 'light' } = {},
  ): Promise<ApiResult<'metrics.snapshot'>> {
    const knobs = this.knobs();
    const { trace, owned } = this.currentTrace();
    const { snapshots } = await this.metrics.snapshots(trace, [knobs.gate], knobs.version, options, owned);
    return snapshots[0];
  }

  /** A/B: one trace, two settings, two snapshots; nothing calls the model. */
  async compare(a: GateSettings, b: GateSettings, lastFrames?: number): Promise<ApiResult<'metrics.compare'>> {
    const { trace, owned } = this.currentTrace();
    const { snapshots, computeMs } = await this.metrics.snapshots(
      trace,
      [a, b],
      this.knobs().version,
      { lastFrames },
      owned,
    );
    return { a: snapshots[0], b: snapshots[1], computeMs };
  }

  /** Operator feedback: the true class of a recorded frame. */
  label(frame: number, label: number): ApiResult<'stream.label'> {
    if (this.session === null)
      throw new KnobError('NOT_AVAILABLE', 'no live recording to label (start a stream first)');
    this.session.builder.setLabel(frame, label);
    const labels = this.session.builder.trace.labels;
    let labelled = 0;
    for (let i = 0; i < this.session.framesProcessed; i++) if (labels !== null && labels[i] >= 0) labelled++;
    return { frame, label, labelledFrames: labelled };
  }

  /** The settings and the metrics report of the current trace, in a folder (until the bundle issue). */
  async exportSettingsAndReport(dir: string): Promise<ApiResult<'bundle.export'>> {
    const { trace } = this.currentTrace();
    const knobs = this.knobs();
    const model = this.client?.description.paths.join(' + ') ?? null;
    const context = {
      model: model ?? 'unknown',
      source: this.opened?.source?.info.description ?? this.opened?.kind ?? 'loaded trace',
    };
    const files = await writeRunOutputs(dir, trace, knobs.gate, analyseRun(trace, knobs.gate), context);
    const settingsPath = join(dir, SETTINGS_FILE_NAME);
    await writeFile(
      settingsPath,
      `${JSON.stringify({ format: 'knob-settings', formatVersion: SETTINGS_FORMAT_VERSION, gate: knobs.gate, model, exportedAt: new Date().toISOString() }, null, 1)}\n`,
    );
    return { path: dir, files: [settingsPath, files.trace, files.metrics, files.report] };
  }

  private reportError(error: KnobErrorPayload): void {
    this.lastError = error;
    this.emitState();
  }

  private emitState(): ApiResult<'stream.stop'> {
    const state = {
      running: this.playing !== null,
      position: this.position,
      framesProcessed: this.session?.framesProcessed ?? 0,
      framesDropped: this.session?.framesDropped ?? 0,
      error: this.lastError,
    };
    this.emit('stream.state', state);
    return state;
  }

  async close(): Promise<void> {
    await this.stop();
    await this.metrics.close();
    this.session?.close();
    await this.client?.close();
    this.client = null;
  }
}

function describeSource(kind: OpenedSource['kind'], info: SourceInfo): ApiResult<'source.open'> {
  return {
    kind,
    description: info.description,
    frameCount: info.frameCount,
    frameRateHz: info.frameRateHz,
    hasLabels: info.hasLabels,
    labelNames: info.labelNames,
    timestampSource: info.timestampSource,
  };
}

/** A frame's readout as the API carries it: class names on the top classes, an infinite T_eff as null. */
function readoutToApi(r: FrameReadout, labelNames: string[]) {
  return {
    top: r.top.map((c) => ({ ...c, label: labelNames[c.classIndex] ?? String(c.classIndex) })),
    effectiveTemperature: Number.isFinite(r.effectiveTemperature) ? r.effectiveTemperature : null,
    confidenceShrinkageRatio: r.confidenceShrinkageRatio,
    branchesDisagree: r.branchesDisagree,
  };
}

function imageToApi(image: { width: number; height: number; channels: 1 | 3; pixels: Uint8Array }) {
  return {
    width: image.width,
    height: image.height,
    channels: image.channels,
    base64: Buffer.from(image.pixels).toString('base64'),
  };
}

function toApiUpdate(update: LiveUpdate, labelNames: string[]): ApiEventData<'stream.update'> {
  return {
    frame: update.frame,
    timestampSeconds: update.timestampSeconds,
    settingsVersion: update.settingsVersion,
    g: update.g,
    uRef: update.uRef,
    label: update.label,
    ...readoutToApi(update.readout, labelNames),
    framesProcessed: update.framesProcessed,
    framesDropped: update.framesDropped,
    endToEndMs: update.endToEndMs,
    metrics: update.metrics.map((m) => ({ identity: m.identity, value: Number.isFinite(m.value) ? m.value : null })),
    rolling: update.rolling.map((m) => ({ name: m.name, identity: m.identity, value: m.value })),
    image: imageToApi(update.image),
    corruption: update.corruption,
    severity: update.severity,
  };
}
