import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type {
  ApiEvent,
  ApiEventData,
  ApiParsedParams,
  ApiResult,
  Knobs,
  MetricsOptions,
} from '../../../src-shared/api/contract';
import { decodeFramePacket } from '../../../src-shared/api/frame-packet';
import type { ModelDescription, ModelOptions } from '../../../src-shared/api/model-options';
import type { ProbeSourceKind } from '../../../src-shared/api/measurements';
import type { RecentRuns } from '../../../src-shared/api/recent-runs';
import type { SessionState, SessionStateKind, SourceInfo } from '../../../src-shared/api/session-state';
import {
  calibratorClassCount,
  calibratorFeatureWidth,
  checkCalibratorFor,
  compileCalibrator,
  describeCalibrator,
  type CalibrationMethod,
  type Calibrator,
  type CalibratorSpec,
  type HeldOutSplit,
} from '../../../src-shared/calibrators';
import { checkScheduleForChannels, type CorruptionSchedule } from '../../../src-shared/corruptions';
import { KnobError, type KnobErrorPayload } from '../../../src-shared/errors';
import { frameReadout, type FrameReadout } from '../../../src-shared/fusion/frame-readout';
import { frameFeatures } from '../../../src-shared/trace/trace-scores';
import { DEFAULT_GATE_SETTINGS, parseGateSettings, type GateSettings } from '../../../src-shared/gate/gate-settings';
import { decimationIndices } from '../../../src-shared/plots/decimate';
import { replay } from '../../../src-shared/trace/replay';
import { parseTuningRequest, tuningSplitOf } from '../../../src-shared/tuning';
import type { CallContext } from '../api/call-context';
import { LivePipeline, type LiveUpdate } from '../engine/live-pipeline';
import { MetricsWorkerClient } from '../engine/metrics-worker-client';
import { runOffline } from '../engine/offline-run';
import { checkOutputFolder, writeOutputFile } from '../files/output-files';
import { hashUserFile, readUserFile } from '../files/user-files';
import { checkTraceRecordedWith, describeModelHash, sameModel } from '../recording/model-binding';
import { buildBundle } from '../bundle/bundle-export';
import { sha256Hex } from '../files/sha256';
import { bundleModelOptions, readVerifiedBundle } from '../bundle/bundle-verify';
import { InferenceClient } from '../inference/inference-client';
import type { InferenceLauncher } from '../inference/inference-launcher';
import { reportError } from '../logging/internal-error';
import type { Logger } from '../logging/logger';
import { DEFAULT_MODEL_PATH } from '../model-card/default-model';
import { readSettingsFile, SETTINGS_FORMAT_VERSION } from '../recording/settings-file';
import { readTraceFile, writeTraceFile } from '../recording/trace-arrow';
import { readClassMapFile } from '../sources/class-map-file';
import { readLabelFile } from '../recording/label-import';
import type { LabelEdit } from '../../../src-shared/labels/label-layers';
import { runProvenance, storedProvenanceOf, unknownProvenance } from '../report/provenance';
import type { FrameSource } from '../sources/frame-source';
import { modelLabelOptions, openSource } from '../sources/open-source';
import type { FrameImage } from './frame-image-ring';
import { Playback, type PlaybackEnd } from './playback';
import type { RecentRunsStore } from '../recent-runs/recent-runs-store';
import { Recording, ROLLING_WINDOW_FRAMES } from './recording';
import { rollingSeries } from '../../../src-shared/metrics/rolling-series';
import { DeskProbes, type ProbeSource } from '../probes/desk-probes';
import { analyseOnThread } from '../analysis/analysis-thread';
import { tuneOnThreads } from '../tuning/tuning-pool';
import { tuningSummary } from '../tuning/tuning-view';
import { assertAllowed, transitionOf, type SessionEvent } from './transitions';

/**
 * The session: the one object behind the API (the Electron shell, the browser host and the tests
 * all drive it). Its state is one explicit union, each variant holding exactly what exists in it;
 * every transition is checked against SESSION_TRANSITIONS (transitions.ts) and goes through
 * `enter`, which logs it and tells every view. Transitions run one at a time.
 *
 * It is split into parts that each own one thing: Playback (clock, speed, loop, position), the
 * Recording (trace, labels, the rolling figures), the LivePipeline (inference and gate stepping into
 * the live recording), and the settings file module. Nothing that replaces a recording with unsaved
 * work happens unless the caller says `discard: true`.
 */
export type EmitEvent = <E extends ApiEvent>(event: E, data: ApiEventData<E>) => void;

interface OpenedSource {
  info: SourceInfo;
  /** Null for a camera: its frames are pushed by the renderer. */
  frames: FrameSource | null;
  schedule: CorruptionSchedule;
  seed: number;
  /** The model's feature width the live recording keeps, or null (source.open's recordFeatures). */
  featureWidth: number | null;
}

type State =
  | { kind: 'no-model' }
  | { kind: 'ready'; model: InferenceClient; source: OpenedSource | null }
  | { kind: 'playing'; model: InferenceClient; source: OpenedSource; recording: Recording; pipeline: LivePipeline }
  | { kind: 'camera'; model: InferenceClient; source: OpenedSource; recording: Recording; pipeline: LivePipeline }
  | {
      kind: 'paused';
      model: InferenceClient | null;
      source: OpenedSource | null;
      recording: Recording;
      /** The live pipeline that resumes the recording (with its gate state); null for complete recordings. */
      pipeline: LivePipeline | null;
    }
  | { kind: 'offline-run'; model: InferenceClient; source: OpenedSource; controller: AbortController };

export interface SessionOptions {
  emit: EmitEvent;
  logger: Logger;
  /** Where recordings are kept as recent runs; null keeps none (a recording is then only in memory). */
  recentRuns?: RecentRunsStore | null;
  /** How the inference process is started (default child_process.fork; Electron's utilityProcess). */
  inferenceLauncher?: InferenceLauncher;
}

export type SourceOpenParams = ApiParsedParams<'source.open'>;

const modelOf = (s: State): InferenceClient | null => ('model' in s ? s.model : null);
const sourceOf = (s: State): OpenedSource | null => ('source' in s ? s.source : null);
const recordingOf = (s: State): Recording | null => ('recording' in s ? s.recording : null);
const pipelineOf = (s: State): LivePipeline | null => ('pipeline' in s ? s.pipeline : null);

export class Session {
  private state: State = { kind: 'no-model' };
  private knobs: Knobs = { gate: DEFAULT_GATE_SETTINGS, calibrator: null, calibratorModel: null, version: 0 };
  /** knobs.calibrator made ready to apply. */
  private outputCalibrator: Calibrator | null = null;
  private readonly playback = new Playback();
  private readonly probes = new DeskProbes();
  /** A model.load between its checks and the old model's close: probes are refused meanwhile. */
  private modelLoading = false;
  private readonly metrics = new MetricsWorkerClient();
  private nextRecordingId = 1;
  private lastError: KnobErrorPayload | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly emit: EmitEvent;
  private readonly logger: Logger;
  private readonly recentRuns: RecentRunsStore | null;
  private readonly inferenceLauncher: InferenceLauncher | undefined;
  private keepTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(options: SessionOptions) {
    this.emit = options.emit;
    this.logger = options.logger;
    this.recentRuns = options.recentRuns ?? null;
    this.inferenceLauncher = options.inferenceLauncher;
  }

  /** The whole session as the API describes it. */
  describe(): SessionState {
    const source = sourceOf(this.state);
    return {
      state: this.state.kind,
      model: modelOf(this.state)?.description ?? null,
      source: source?.info ?? null,
      schedule: source?.schedule ?? null,
      seed: source?.seed ?? 0,
      playback: this.playback.describe(),
      recording: recordingOf(this.state)?.summary() ?? null,
      error: this.lastError,
    };
  }

  get stateKind(): SessionStateKind {
    return this.state.kind;
  }

  // ---- transitions -------------------------------------------------------------------------

  /** Transitions run one at a time, in the order they were asked for. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private enter(next: State, event: SessionEvent): void {
    const from = this.state.kind;
    this.state = next;
    this.logger.info(
      { event, from, to: next.kind, recording: recordingOf(next)?.id ?? null },
      `session ${from} -> ${next.kind}`,
    );
    this.emitState();
    // A recording that stops changing (paused, a run finished) is kept as a recent run.
    if (next.kind === 'paused' && this.recentRuns !== null) void this.exclusive(() => this.keepRecording());
  }

  private emitState(): SessionState {
    const state = this.describe();
    this.emit('session.state', state);
    return state;
  }

  /**
   * Refuses (and changes nothing) when `event` would replace a recording with unsaved work. With
   * recent runs, the recording is kept first, so nothing is lost and nothing needs asking; only a
   * recording the folder cannot hold (its size limit) is refused.
   */
  private async requireDiscardable(event: SessionEvent, discard: boolean): Promise<void> {
    if (!discard) await this.keepRecording();
    const recording = recordingOf(this.state);
    if (discard || recording === null || !recording.unsaved) return;
    const saved = recording.path === null ? 'never saved' : `changed since it was saved to ${recording.path}`;
    const doing = transitionOf(event).doing;
    throw new KnobError(
      'WOULD_DISCARD',
      `${doing[0].toUpperCase()}${doing.slice(1)} would discard the current recording (${recording.frameCount} frames, ${recording.labelledFrameCount} labelled, ${saved})`,
    );
  }

  private requireModel(): InferenceClient {
    const model = modelOf(this.state);
    if (model === null) throw new KnobError('NOT_AVAILABLE', 'no model is loaded (model.load first)');
    return model;
  }

  private requireRecording(): Recording {
    const recording = recordingOf(this.state);
    if (recording === null)
      throw new KnobError('NOT_AVAILABLE', 'no recording yet (play a source, run it offline or load a trace)');
    return recording;
  }

  // ---- recent runs ---------------------------------------------------------------------------

  /**
   * Keeps the current recording as a recent run (the same run again when it was kept before) when
   * it holds frames or labels no file has. Called inside a transition; a failure to keep is logged
   * and reported in the background, never lost silently, and the recording stays unsaved.
   */
  private async keepRecording(): Promise<void> {
    const store = this.recentRuns;
    const recording = recordingOf(this.state);
    if (store === null || recording === null || !recording.unsaved || recording.frameCount === 0) return;
    const revision = recording.revision;
    const { trace, output } = recording.copy();
    const source = recording.origin === 'loaded' ? null : sourceOf(this.state);
    const last = recording.provenance.schedule?.at(-1) ?? null;
    try {
      const kept = await store.keep({
        trace,
        run: { settings: this.knobs.gate, output },
        provenance: recording.provenance,
        id: recording.keptAs,
        description: {
          description: recording.description,
          origin: recording.origin,
          model: recording.provenance.model?.paths.join(' + ') ?? null,
          source:
            source === null
              ? null
              : {
                  kind: source.info.kind,
                  path: source.info.path,
                  frameRateHz: source.info.frameRateHz,
                  description: source.info.description,
                },
          schedule: last?.schedule ?? null,
          seed: last?.seed ?? 0,
          settings: this.knobs.gate,
          frameCount: trace.frameCount,
          labelledFrameCount: recording.labelledFrameCount,
          position: source?.frames != null ? this.playback.position : null,
        },
      });
      if (kept !== null) {
        recording.markKept(kept.id, store.path(kept.id), revision);
        this.emitState();
      }
    } catch (error) {
      this.logger.warn({ error: (error as Error).message }, 'the recording could not be kept as a recent run');
      this.reportBackground(
        new KnobError('INTERNAL', `the recording could not be kept: ${(error as Error).message}`),
        false,
      );
    }
    this.emit('runs.changed', store.describe());
  }

  /** Labels given while paused are kept a second after the last one. */
  private keepSoon(): void {
    if (this.recentRuns === null) return;
    if (this.keepTimer !== null) clearTimeout(this.keepTimer);
    this.keepTimer = setTimeout(() => {
      this.keepTimer = null;
      if (this.state.kind === 'paused') void this.exclusive(() => this.keepRecording());
    }, 1000);
  }

  /** The folder as it is now: another process (a second host on the same folder) may have kept runs. */
  async recentRunsList(): Promise<RecentRuns> {
    if (this.recentRuns === null) return { enabled: false, folder: null, limitBytes: 0, usedBytes: 0, runs: [] };
    return this.recentRuns.refresh();
  }

  private requireRecentRuns(): RecentRunsStore {
    if (this.recentRuns === null)
      throw new KnobError('NOT_AVAILABLE', 'this backend keeps no recent runs (it was started without a data folder)');
    return this.recentRuns;
  }

  async setRecentRunsLimit(limitBytes: number): Promise<RecentRuns> {
    const list = await this.requireRecentRuns().setLimit(limitBytes);
    this.emit('runs.changed', list);
    return list;
  }

  /**
   * A recent run becomes the current recording (paused); when the source it was recorded from is
   * open, the position moves to where the run left off.
   */
  async openRecentRun(id: string, discard: boolean): Promise<ApiResult<'runs.open'>> {
    const store = this.requireRecentRuns();
    return this.exclusive(async () => {
      assertAllowed('trace.load', this.state.kind);
      const { run, file } = await store.read(id);
      await this.requireDiscardable('trace.load', discard);
      await this.stopLive();
      const output = file.run?.output ?? replay(file.trace, this.knobs.gate);
      const recorded = storedProvenanceOf(file.context);
      const recording = Recording.complete(
        {
          id: this.nextRecordingId++,
          calibrator: this.calibratorFor(
            file.trace.features?.width ?? null,
            'the recent run has no features of its width',
          ),
          origin: 'loaded',
          description: `recent run of ${run.keptAt}: ${run.description}`,
          provenance: recorded ?? unknownProvenance(run.source?.description ?? 'unknown', run.description),
          path: store.path(id),
        },
        file.trace,
        output,
      );
      recording.markKept(id, store.path(id));
      const source = sourceOf(this.state);
      if (
        source?.frames != null &&
        run.position !== null &&
        run.source !== null &&
        source.info.kind === run.source.kind &&
        source.info.path === run.source.path
      )
        this.playback.seek(run.position, source.info.frameCount);
      this.enter({ kind: 'paused', model: modelOf(this.state), source, recording, pipeline: null }, 'trace.load');
      return { path: store.path(id), frameCount: file.trace.frameCount, classCount: file.trace.classCount };
    });
  }

  /** Two recent runs, each at its recorded settings, side by side with B - A (independent resampling). */
  async compareRecentRuns(a: string, b: string, signal?: AbortSignal): Promise<ApiResult<'runs.compare'>> {
    const store = this.requireRecentRuns();
    const [runA, runB] = await Promise.all([store.read(a), store.read(b)]);
    return this.metrics.compareRuns(
      { trace: runA.file.trace, settings: runA.file.run?.settings ?? runA.run.settings, run: runA.run },
      { trace: runB.file.trace, settings: runB.file.run?.settings ?? runB.run.settings, run: runB.run },
      signal,
    );
  }

  /** Stops playing and closes the live pipeline; the model and the source stay. */
  private async stopLive(): Promise<void> {
    await this.playback.stop();
    const pipeline = pipelineOf(this.state);
    if (pipeline !== null) {
      await pipeline.idle();
      pipeline.close();
    }
  }

  async loadModel(
    options: ModelOptions,
    discard: boolean,
    calibratorChoice?: 'keep' | 'drop',
  ): Promise<ModelDescription> {
    return this.exclusive(async () => {
      assertAllowed('model.load', this.state.kind);
      this.refuseWhileProbing('loading a model');
      const resolved = options.path === 'default' ? { ...options, path: DEFAULT_MODEL_PATH } : options;
      // before anything starts: a calibrator of another model is the caller's decision (model-binding.ts)
      const keepCalibrator = await this.calibratorChoiceFor(resolved, calibratorChoice);
      // From here until the old model is closed, probes are refused (they do not queue behind this):
      // one would record through the old model and have it closed under it.
      this.modelLoading = true;
      let client: InferenceClient;
      try {
        await this.requireDiscardable('model.load', discard);
        // Loaded before anything is torn down: a model that fails to load changes nothing.
        client = await InferenceClient.start(resolved, {
          ...(this.inferenceLauncher === undefined ? {} : { launcher: this.inferenceLauncher }),
          onRestart: (notice) => {
            this.logger.warn({ attempt: notice.attempt, delayMs: notice.delayMs }, notice.reason);
            this.reportBackground({
              code: 'INFERENCE_CRASHED',
              message: `${notice.reason}; restarting in ${notice.delayMs} ms`,
            });
          },
        });
        await this.stopLive();
        const previous = modelOf(this.state);
        this.playback.resetClock();
        this.playback.position = 0;
        this.lastError = null;
        this.enter({ kind: 'ready', model: client, source: null }, 'model.load');
        await previous?.close();
      } finally {
        this.modelLoading = false;
      }
      // A calibrator fitted for another number of classes cannot apply to this model.
      const calibrator = this.knobs.calibrator;
      const classes = calibrator === null ? null : calibratorClassCount(calibrator);
      const misfit = classes !== null && classes !== client.description.classCount;
      if (calibrator !== null && (!keepCalibrator || misfit)) this.setCalibrator(null);
      // kept by choice but unusable: dropped all the same, and said so (the state's notice and the log)
      if (calibrator !== null && keepCalibrator && misfit)
        this.reportBackground({
          code: 'INVALID_SETTINGS',
          message: `the output calibrator (${describeCalibrator(calibrator)}) is for ${classes} classes and ${client.description.paths.join(' + ')} has ${client.description.classCount}: it was dropped, although keeping it was asked`,
        });
      this.logger.info(
        {
          paths: client.description.paths,
          provider: client.description.executionProvider,
          skippedProviders: client.description.skippedProviders,
        },
        'model loaded',
      );
      return client.description;
    });
  }

  /**
   * Whether the output calibrator stays on after loading `options`: yes when there is none or it
   * belongs to that model (same SHA-256); otherwise only when the caller chose 'keep', and without a
   * choice the load is refused (CALIBRATOR_OF_ANOTHER_MODEL) before anything changes.
   */
  private async calibratorChoiceFor(options: ModelOptions, choice: 'keep' | 'drop' | undefined): Promise<boolean> {
    const { calibrator, calibratorModel } = this.knobs;
    if (calibrator === null || choice === 'keep') return true;
    if (choice === 'drop') return false;
    const paths = options.secondPath === undefined ? [options.path] : [options.path, options.secondPath];
    const hashes = await Promise.all(paths.map(async (path) => (await hashUserFile(path, 'model')).sha256));
    if (calibratorModel !== null && sameModel(calibratorModel, hashes)) return true;
    throw new KnobError(
      'CALIBRATOR_OF_ANOTHER_MODEL',
      `the output calibrator (${describeCalibrator(calibrator)}) was fitted on ${calibratorModel === null ? 'a model not recorded' : `another model (${describeModelHash(calibratorModel)})`}, not ${paths.join(' + ')} (${describeModelHash(hashes)}): keep it on the new model or drop it`,
    );
  }

  modelInfo(): ModelDescription | null {
    return modelOf(this.state)?.description ?? null;
  }

  async openSource(params: SourceOpenParams, call: CallContext): Promise<SourceInfo> {
    return this.exclusive(async () => {
      assertAllowed('source.open', this.state.kind);
      await this.requireDiscardable('source.open', params.discard);
      const model = this.requireModel();
      const schedule = params.schedule ?? { kind: 'none' as const };
      const seed = params.seed ?? 0;
      const featureWidth = params.recordFeatures === true ? model.description.featureCount : null;
      if (params.recordFeatures === true && featureWidth === null)
        throw new KnobError(
          'INVALID_INPUT',
          `recordFeatures: ${model.description.paths[0]} has no 'features' output to record`,
        );
      const input = model.description.input;
      checkScheduleForChannels(schedule, input.channels);
      let opened: OpenedSource;
      if (params.camera !== undefined && params.kind !== 'camera')
        throw new KnobError('BAD_REQUEST', 'camera: only a camera source takes a device description');
      if (params.kind === 'camera') {
        if (params.path !== undefined) throw new KnobError('BAD_REQUEST', 'a camera source takes no path');
        const info: SourceInfo = {
          kind: 'camera',
          path: null,
          description: 'camera frames pushed by the renderer',
          frameCount: null,
          width: input.width,
          height: input.height,
          channels: input.channels,
          frameRateHz: params.frameRateHz ?? 30,
          hasLabels: false,
          labelNames: null,
          timestampSource: 'capture',
          identity: params.camera === undefined ? null : { kind: 'camera', ...params.camera },
          classMapping: null,
        };
        opened = { info, frames: null, schedule, seed, featureWidth };
      } else {
        const frames = await openSource(
          { kind: params.kind, path: params.path },
          {
            target: input,
            frameRateHz: params.frameRateHz,
            ...modelLabelOptions(
              model.description,
              params.classMap === undefined ? null : await readClassMapFile(params.classMap),
            ),
            signal: call.signal,
            onProgress: (done, total) => call.progress(`opening ${params.path ?? params.kind}`, done, total),
          },
        );
        opened = { info: frames.info, frames, schedule, seed, featureWidth };
      }
      await this.stopLive();
      this.playback.resetClock();
      this.playback.position = 0;
      this.lastError = null;
      this.enter({ kind: 'ready', model, source: opened }, 'source.open');
      this.logger.info({ kind: opened.info.kind, source: opened.info.description }, 'source opened');
      return opened.info;
    });
  }

  /** The camera's device label and capture resolution, once the renderer captures: provenance. */
  describeCamera(camera: { deviceLabel: string; width: number; height: number }): SourceInfo {
    const state = this.state;
    const source = sourceOf(state);
    if (source === null || source.info.kind !== 'camera')
      throw new KnobError('NOT_AVAILABLE', 'the open source is not a camera (source.open with kind camera first)');
    const identity = { kind: 'camera' as const, ...camera };
    const described = { ...source, info: { ...source.info, identity } };
    if (state.kind !== 'no-model') this.state = { ...state, source: described } as State;
    const recording = recordingOf(this.state);
    if (recording !== null && recording.appendable) recording.noteSourceIdentity(identity);
    this.emitState();
    return described.info;
  }

  /** A new corruption schedule for the open source; a running stream applies it from its next frame. */
  async configureSource(schedule: CorruptionSchedule, seed?: number): Promise<SessionState> {
    return this.exclusive(async () => {
      assertAllowed('source.configure', this.state.kind);
      const state = this.state;
      const source = sourceOf(state);
      if (source === null) throw new KnobError('NOT_AVAILABLE', 'no source is open (source.open first)');
      checkScheduleForChannels(schedule, this.requireModel().description.input.channels);
      const configured = { ...source, schedule, seed: seed ?? source.seed };
      if (state.kind !== 'no-model') this.state = { ...state, source: configured } as State;
      pipelineOf(state)?.setSchedule(configured.schedule, configured.seed);
      this.lastError = null;
      this.logger.info({ schedule: configured.schedule, seed: configured.seed }, 'corruption schedule changed');
      return this.emitState();
    });
  }

  /** Plays the open source (or starts the camera stream) into the live recording. */
  async start(params: { speed?: number; loop?: boolean; discard: boolean }): Promise<SessionState> {
    return this.exclusive(async () => {
      assertAllowed('stream.start', this.state.kind);
      this.refuseWhileProbing('playing');
      const model = this.requireModel();
      const source = sourceOf(this.state);
      if (source === null) throw new KnobError('NOT_AVAILABLE', 'no source is open (source.open first)');
      if (params.speed !== undefined) this.playback.setSpeed(params.speed);
      if (params.loop !== undefined) this.playback.loop = params.loop;
      let pipeline = pipelineOf(this.state);
      let recording = recordingOf(this.state);
      if (pipeline === null || recording === null || !recording.appendable) {
        await this.requireDiscardable('stream.start', params.discard);
        recording = Recording.live(
          {
            id: this.nextRecordingId++,
            calibrator: this.calibratorFor(source.featureWidth, 'the live stream records no features of its width'),
            description: `live: ${source.info.description}`,
            provenance: runProvenance({
              model: model.description,
              source: source.info,
              schedule: source.schedule,
              seed: source.seed,
              origin: source.frames === null ? 'live recording (camera)' : 'live recording (file played in the desk)',
            }),
          },
          model.description,
          source.info.frameRateHz,
          source.featureWidth,
        );
        this.playback.resetClock();
        pipeline = this.livePipeline(model, source, recording);
      }
      this.lastError = null;
      if (source.frames === null) {
        this.enter({ kind: 'camera', model, source, recording, pipeline }, 'stream.start');
      } else {
        this.enter({ kind: 'playing', model, source, recording, pipeline }, 'stream.start');
        const live = pipeline;
        const frameSource = source.frames;
        // A file never drops a frame: playback waits for the pipeline to take each one.
        void this.playback
          .start(frameSource, async (frame) => {
            await live.whenAccepting();
            live.submit(frame.pixels, frameSource.info, frame.timestampSeconds, frame.label, frame.sourceFrame);
          })
          .then((end) => this.onPlaybackEnd(end, live));
      }
      return this.describe();
    });
  }

  private livePipeline(model: InferenceClient, source: OpenedSource, recording: Recording): LivePipeline {
    return new LivePipeline({
      client: model,
      recording,
      settings: this.knobs.gate,
      settingsVersion: this.knobs.version,
      calibrator: this.outputCalibrator,
      schedule: source.schedule,
      streamSeed: source.seed,
      onUpdate: (update) => this.emit('stream.update', toApiUpdate(update, model.description.labelNames)),
      onError: (error) => this.reportBackground(error),
    });
  }

  /** The file ended or failed while playing: pause, keeping the recording. */
  private async onPlaybackEnd(end: PlaybackEnd, pipeline: LivePipeline): Promise<void> {
    if (end.reason === 'stopped') return;
    await this.exclusive(async () => {
      const state = this.state;
      if (state.kind !== 'playing' || state.pipeline !== pipeline) return;
      assertAllowed('stream.end', state.kind);
      await pipeline.idle();
      if (end.reason === 'failed') this.reportBackground(end.error, false);
      this.enter({ ...state, kind: 'paused' }, 'stream.end');
    });
  }

  /** Pauses; the recording and the gate state stay. Elsewhere there is nothing to stop. */
  async stop(): Promise<SessionState> {
    return this.exclusive(async () => {
      assertAllowed('stream.stop', this.state.kind);
      const state = this.state;
      if (state.kind !== 'playing' && state.kind !== 'camera') return this.describe();
      await this.playback.stop();
      await state.pipeline.idle();
      this.enter({ ...state, kind: 'paused' }, 'stream.stop');
      return this.describe();
    });
  }

  async setPlayback(params: { speed?: number; loop?: boolean }): Promise<SessionState> {
    assertAllowed('stream.playback', this.state.kind);
    if (params.speed !== undefined) this.playback.setSpeed(params.speed);
    if (params.loop !== undefined) this.playback.loop = params.loop;
    return this.emitState();
  }

  /** Moves the source position (playing: at once); the recording is kept and its clock runs on. */
  async seek(frame: number): Promise<SessionState> {
    assertAllowed('stream.seek', this.state.kind);
    const source = sourceOf(this.state);
    if (source?.frames == null) throw new KnobError('NOT_AVAILABLE', 'seeking needs an open file source');
    this.playback.seek(frame, source.info.frameCount);
    return this.emitState();
  }

  resetGate(): SessionState {
    assertAllowed('stream.resetGate', this.state.kind);
    pipelineOf(this.state)?.resetGate();
    return this.describe();
  }

  /**
   * A frame from the binary path; refused unless a camera stream is running, and checked against
   * the model before it can reach the recording (its label must be a class of the model, or -1).
   */
  pushFrame(packet: Uint8Array): void {
    const frame = decodeFramePacket(packet);
    assertAllowed('camera.frame', this.state.kind);
    if (this.state.kind !== 'camera') return;
    const classCount = this.state.model.description.classCount;
    if (!(frame.label === -1 || (frame.label >= 0 && frame.label < classCount))) {
      throw new KnobError(
        'BAD_REQUEST',
        `frame packet label ${frame.label} is not a class of the model (0..${classCount - 1}, or -1)`,
      );
    }
    this.state.pipeline.submit(frame.pixels, frame, frame.timestampSeconds, frame.label);
  }

  /**
   * The whole open file source through the model at full speed, batched, into a new recording.
   * Cancelling the call stops the run and keeps the frames computed so far.
   */
  async runOffline(
    params: { maxFrames?: number; discard: boolean },
    call: CallContext,
  ): Promise<ApiResult<'stream.runOffline'>> {
    const { model, source, controller } = await this.exclusive(async () => {
      assertAllowed('offline.start', this.state.kind);
      this.refuseWhileProbing('an offline run');
      await this.requireDiscardable('offline.start', params.discard);
      const model = this.requireModel();
      const source = sourceOf(this.state);
      if (source?.frames == null)
        throw new KnobError('NOT_AVAILABLE', 'an offline run needs an open file source (not a camera)');
      await this.stopLive();
      const controller = new AbortController();
      this.enter({ kind: 'offline-run', model, source, controller }, 'offline.start');
      return { model, source, controller };
    });
    const abort = (): void => controller.abort();
    call.signal.addEventListener('abort', abort, { once: true });
    if (call.signal.aborted) abort();
    const frames = source.frames!;
    const task = `offline run of ${frames.info.description}`;
    try {
      const result = await runOffline({
        client: model,
        source: frames,
        schedule: source.schedule,
        streamSeed: source.seed,
        settings: this.knobs.gate,
        batchSize: 256,
        maxFrames: params.maxFrames,
        signal: controller.signal,
        onProgress: (done, total) => call.progress(task, done, total),
      });
      await this.exclusive(async () => {
        assertAllowed('offline.end', this.state.kind);
        if (result.framesProcessed === 0) {
          this.enter({ kind: 'ready', model, source }, 'offline.end');
          return;
        }
        const recording = Recording.complete(
          {
            id: this.nextRecordingId++,
            calibrator: this.calibratorFor(result.trace.features?.width ?? null, 'the offline run records no features'),
            origin: 'offline',
            description: `offline run: ${frames.info.description}`,
            provenance: runProvenance({
              model: model.description,
              source: frames.info,
              schedule: source.schedule,
              seed: source.seed,
              origin: 'offline run (desk)',
            }),
          },
          result.trace,
          result.output,
        );
        this.enter({ kind: 'paused', model, source, recording, pipeline: null }, 'offline.end');
      });
      if (result.error !== null)
        this.logger.warn({ code: result.error.code }, `offline run stopped: ${result.error.message}`);
      return { framesProcessed: result.framesProcessed, wallMs: result.wallMs, error: result.error };
    } finally {
      call.signal.removeEventListener('abort', abort);
    }
  }

  /** A new, empty recording (the next play starts it); the source position stays. */
  async resetRecording(discard: boolean): Promise<SessionState> {
    return this.exclusive(async () => {
      assertAllowed('recording.reset', this.state.kind);
      await this.requireDiscardable('recording.reset', discard);
      await this.stopLive();
      this.playback.resetClock();
      const model = modelOf(this.state);
      this.enter(
        model === null ? { kind: 'no-model' } : { kind: 'ready', model, source: sourceOf(this.state) },
        'recording.reset',
      );
      return this.describe();
    });
  }

  // ---- the recording -----------------------------------------------------------------------

  /**
   * The operator's correction of a recorded frame: its own layer over the truth (label-layers.ts),
   * undoable; every view sees it at once when the metrics read corrections.
   */
  label(frame: number, label: number): ApiResult<'stream.label'> {
    return this.labelStep((recording) => recording.correctLabel(frame, label))!;
  }

  undoLabel(): ApiResult<'labels.undo'> {
    return this.labelStep((recording) => recording.undoLabel());
  }

  redoLabel(): ApiResult<'labels.redo'> {
    return this.labelStep((recording) => recording.redoLabel());
  }

  useCorrections(use: boolean): ApiResult<'labels.useCorrections'> {
    this.labelStep((recording) => (recording.useCorrections(use), null));
    return this.requireRecording().summary();
  }

  /** Labels from a file for the frames the source left unlabelled (label-import.ts). */
  async importLabels(path: string, classMapPath: string | undefined): Promise<ApiResult<'labels.import'>> {
    assertAllowed('recording.label', this.state.kind);
    const recording = this.requireRecording();
    const classMap = classMapPath === undefined ? null : await readClassMapFile(classMapPath);
    const read = await readLabelFile(path, recording.trace, recording.frameCount, classMap);
    // the files were read against this recording: one that replaced it meanwhile has other frames
    if (recordingOf(this.state) !== recording)
      throw new KnobError(
        'NOT_AVAILABLE',
        `${path}: the recording changed while the label file was read (another source, run or trace); import it again`,
      );
    this.labelStep((r) => (r.importLabels(read.imported.frames, read.imported.classIndices, path), null));
    recording.noteLabelImport({ file: read.file, frames: read.imported.frames.length });
    return {
      framesLabelled: read.imported.frames.length,
      rows: read.imported.rows,
      key: read.imported.key,
      file: read.file,
      classMapping: read.imported.mapping,
      recording: recording.summary(),
    };
  }

  /** One change of the current recording's labels, then what every view needs to follow it. */
  private labelStep(step: (recording: Recording) => LabelEdit | null): ApiResult<'labels.undo'> {
    assertAllowed('recording.label', this.state.kind);
    const recording = this.requireRecording();
    const edit = step(recording);
    this.emit('recording.changed', { recording: recording.summary(), rolling: recording.rolling() });
    if (this.state.kind === 'paused') this.keepSoon();
    return edit === null
      ? null
      : {
          frame: edit.frame,
          truth: edit.truth,
          correction: edit.correction,
          label: edit.effective,
          labelledFrames: recording.labelledFrameCount,
          recording: recording.summary(),
        };
  }

  /** The gate over the whole recording at the current knobs, decimated to `maxPoints` frames. */
  recordingSeries(maxPoints: number): ApiResult<'recording.series'> {
    const recording = this.requireRecording();
    const trace = recording.trace;
    const recorded = { ...trace, frameCount: recording.frameCount };
    const output = replay(recorded, this.knobs.gate);
    const t = trace.timestampsSeconds.subarray(0, recording.frameCount);
    const kept = decimationIndices(t, output.g, t[0] ?? 0, t[t.length - 1] ?? 1, Math.floor(maxPoints / 4));
    const severity = trace.metadata.severity;
    const rolling = rollingSeries(recorded, output.g, this.outputCalibrator, ROLLING_WINDOW_FRAMES, kept);
    return {
      recordingId: recording.id,
      settingsVersion: this.knobs.version,
      frameCount: recording.frameCount,
      tSeconds: kept.map((i) => t[i]),
      g: kept.map((i) => output.g[i]),
      uRef: kept.map((i) => trace.uRef[i]),
      severity: kept.map((i) => (severity?.kind === 'number' ? severity.values[i] : 0)),
      rollingAccuracy: rolling.accuracy,
      rollingConfidence: rolling.confidence,
      rollingWindowFrames: ROLLING_WINDOW_FRAMES,
    };
  }

  /** One recorded frame replayed at the current knobs: what the live view showed, for scrubbing. */
  recordedFrame(frame: number): ApiResult<'trace.frame'> {
    const recording = this.requireRecording();
    if (frame >= recording.frameCount) {
      throw new KnobError('INVALID_INPUT', `frame ${frame} is not recorded (${recording.frameCount} frames)`);
    }
    const knobs = this.knobs;
    const trace = recording.trace;
    const output = replay({ ...trace, frameCount: frame + 1 }, knobs.gate);
    const readout = frameReadout(
      trace.zStatic,
      trace.zDyn,
      frame * trace.classCount,
      trace.classCount,
      output.g[frame],
      3,
      this.outputCalibrator,
      frameFeatures(trace, frame),
    );
    const label = trace.labels![frame];
    const corruption = trace.metadata.corruption;
    const severity = trace.metadata.severity;
    const name = corruption?.kind === 'category' ? corruption.dictionary[corruption.codes[frame]] : undefined;
    const image = recording.image(frame);
    return {
      recordingId: recording.id,
      frame,
      timestampSeconds: trace.timestampsSeconds[frame],
      settingsVersion: knobs.version,
      g: output.g[frame],
      uRef: trace.uRef[frame],
      label: label < 0 ? null : label,
      ...readoutToApi(readout, trace.labelNames),
      corruption: name === undefined || name === 'none' ? null : name,
      severity: severity?.kind === 'number' ? severity.values[frame] : 0,
      image: image === null ? null : imageToApi(image),
    };
  }

  async saveTrace(path: string): Promise<ApiResult<'trace.save'>> {
    assertAllowed('trace.save', this.state.kind);
    const recording = this.requireRecording();
    if (recording.frameCount === 0) throw new KnobError('NOT_AVAILABLE', 'nothing recorded yet (start a stream first)');
    await checkOutputFolder(dirname(path)); // before the recording is copied and encoded
    const revision = recording.revision;
    const { trace, output } = recording.copy();
    await writeTraceFile(path, trace, { settings: this.knobs.gate, output }, { provenance: recording.provenance });
    recording.markSaved(path, revision);
    this.emitState();
    return { path, frameCount: trace.frameCount, classCount: trace.classCount };
  }

  /** A saved trace becomes the current recording; model and source stay. */
  async loadTrace(path: string, discard: boolean): Promise<ApiResult<'trace.load'>> {
    return this.exclusive(async () => {
      assertAllowed('trace.load', this.state.kind);
      await this.requireDiscardable('trace.load', discard);
      const file = await readTraceFile(path);
      const output = file.run?.output ?? replay(file.trace, this.knobs.gate);
      await this.stopLive();
      const recorded = storedProvenanceOf(file.context);
      const provenance =
        recorded === null
          ? unknownProvenance(`trace ${path}`, `loaded from ${path}`)
          : { ...recorded, origin: `${recorded.origin}, loaded from ${path}` };
      const recording = Recording.complete(
        {
          id: this.nextRecordingId++,
          calibrator: this.calibratorFor(
            file.trace.features?.width ?? null,
            `${basename(path)} has no features of its width`,
          ),
          origin: 'loaded',
          description: `trace ${basename(path)}`,
          provenance,
          path,
        },
        file.trace,
        output,
      );
      this.enter(
        { kind: 'paused', model: modelOf(this.state), source: sourceOf(this.state), recording, pipeline: null },
        'trace.load',
      );
      return { path, frameCount: file.trace.frameCount, classCount: file.trace.classCount };
    });
  }

  /** A copy of the current recording for the metrics worker, with what it was taken from. */
  private recordingCopy(signal?: AbortSignal) {
    const recording = this.requireRecording();
    return {
      trace: recording.copy().trace,
      version: this.knobs.version,
      recordingId: recording.id,
      calibrator: this.knobs.calibrator,
      signal,
    };
  }

  /** Metrics of the current recording replayed at the current knobs, computed in the metrics worker. */
  metricsSnapshot(options: MetricsOptions, signal?: AbortSignal): Promise<ApiResult<'metrics.snapshot'>> {
    return this.metrics.snapshot(this.recordingCopy(signal), this.knobs.gate, options);
  }

  /** A/B: one recording, two settings, two snapshots and their paired differences; nothing calls the model. */
  compare(
    a: GateSettings,
    b: GateSettings,
    lastFrames: number | undefined,
    signal?: AbortSignal,
  ): Promise<ApiResult<'metrics.compare'>> {
    return this.metrics.compare(this.recordingCopy(signal), a, b, lastFrames);
  }

  // ---- measuring the gate (issue 17) ------------------------------------------------------------

  /** The step probe at the current knobs: recorded through the model once, replayed after. */
  async stepProbe(params: ApiParsedParams<'probe.step'>, call: CallContext): Promise<ApiResult<'probe.step'>> {
    const model = this.requireIdleModel('the step probe');
    const over = this.probeSource(params.over, 'the step probe');
    return this.probes.stepAt(params, over, model, this.knobs.gate, this.knobs.version, call);
  }

  /** The frequency probe at the current knobs: recorded through the model once, replayed after. */
  async frequencyProbe(
    params: ApiParsedParams<'probe.frequency'>,
    call: CallContext,
  ): Promise<ApiResult<'probe.frequency'>> {
    const model = this.requireIdleModel('the frequency probe');
    const over = this.probeSource(params.over, 'the frequency probe');
    return this.probes.frequencyAt(params, over, model, this.knobs.gate, this.knobs.version, call);
  }

  /** What a probe records over: the embedded test set, or the open source when it is a file. */
  private probeSource(over: ProbeSourceKind, what: string): ProbeSource {
    if (over === 'embedded') return { kind: 'embedded' };
    const source = sourceOf(this.state);
    if (source === null) throw new KnobError('NOT_AVAILABLE', `${what} over the open source: no source is open`);
    if (source.frames === null)
      throw new KnobError(
        'NOT_AVAILABLE',
        `${what} over the open source: ${source.info.description} is live; a probe needs a file source (its streams are replayed from chosen frames)`,
      );
    return { kind: 'open-source', source: source.frames };
  }

  /** A probe recording through the model keeps the model to itself until it ends or is cancelled. */
  private refuseWhileProbing(what: string): void {
    const probe = this.probes.recording;
    if (probe !== null)
      throw new KnobError('NOT_AVAILABLE', `${probe} is recording through the model: cancel it or wait before ${what}`);
  }

  /** The model, when no stream is using it (a probe runs it over its own streams). */
  private requireIdleModel(what: string): InferenceClient {
    if (this.modelLoading)
      throw new KnobError('NOT_AVAILABLE', `${what} runs the model: a model is loading; wait for it`);
    const kind = this.state.kind;
    if (kind === 'playing' || kind === 'camera' || kind === 'offline-run')
      throw new KnobError('NOT_AVAILABLE', `${what} runs the model: pause the stream first`);
    return this.requireModel();
  }

  /**
   * The paper's analyses of the current recording at the current knobs (and output calibrator), by
   * replay on a thread of their own (the stream keeps playing meanwhile).
   */
  async analyse(params: ApiParsedParams<'analysis.run'>, signal?: AbortSignal): Promise<ApiResult<'analysis.run'>> {
    const recording = this.requireRecording();
    const { trace } = recording.copy();
    const { gate, calibrator, version } = this.knobs;
    const started = performance.now();
    const answer = await analyseOnThread(
      { trace, settings: gate, calibrator, permutations: params.permutations },
      signal,
    );
    return {
      recordingId: recording.id,
      settingsVersion: version,
      ...answer,
      wallMs: performance.now() - started,
    };
  }

  /** Tunes the knobs on the current recording by replay, on the tuning threads; the knobs stay. */
  async tune(params: ApiParsedParams<'tune.run'>, call: CallContext): Promise<ApiResult<'tune.run'>> {
    const recording = this.requireRecording();
    const { gate, calibrator, version } = this.knobs;
    if (calibrator !== null && calibrator.method !== 'temperature')
      throw new KnobError(
        'NOT_AVAILABLE',
        `the tuner varies the gate with no calibrator or temperature scaling; switch ${describeCalibrator(calibrator)} off first`,
      );
    const { trace } = recording.copy();
    const request = parseTuningRequest({
      metric: params.metric,
      constraints: params.constraints,
      split: tuningSplitOf(params.split),
      within: params.within,
    });
    const task = `tuning on ${trace.frameCount} recorded frames`;
    const result = await tuneOnThreads(
      trace,
      request,
      { settings: gate, temperature: calibrator?.method === 'temperature' ? calibrator.temperature : 1 },
      { signal: call.signal, onProgress: (done, total) => call.progress(task, done, total) },
    );
    return { ...tuningSummary(result), recordingId: recording.id, settingsVersion: version };
  }

  /** The tuned-calibrator bundle of the current recording at the current knobs and calibrator. */
  async exportBundle(path: string, includeModel: boolean): Promise<ApiResult<'bundle.export'>> {
    const recording = this.requireRecording();
    const model = this.requireModel().description;
    // the same rule and message as knob export (model-binding.ts)
    checkTraceRecordedWith(recording.path ?? recording.description, recording.provenance, model);
    await checkOutputFolder(dirname(path)); // before the recording is copied and the bundle built
    const { trace } = recording.copy();
    const { gate, calibrator } = this.knobs;
    const bundle = buildBundle({
      name: basename(path).slice(0, -'.knob.zip'.length),
      trace,
      model,
      modelFiles: await Promise.all(model.paths.map((p) => readUserFile(p, 'model'))),
      includeModel,
      gate,
      calibrator,
      provenance: recording.provenance,
    });
    const written = await writeOutputFile(path, bundle.bytes);
    const { deploy, members } = bundle.manifest;
    return {
      path: written,
      bytes: bundle.bytes.length,
      members: Object.keys(members).length + 1,
      deploy:
        deploy.stepGraph === null ? (deploy.stepGraphNote ?? 'no step graph') : 'step graph and Triton repository',
    };
  }

  /** Knobs and calibrator from a bundle, or from a knob-settings file or export folder. */
  async importSettings(path: string): Promise<ApiResult<'bundle.import'>> {
    if (path.endsWith('.knob.zip')) return this.importBundle(path);
    const file = await readSettingsFile(path);
    const current = this.modelName();
    const modelNote =
      file.model === null
        ? 'no model recorded'
        : file.model === current
          ? 'same model as the one loaded'
          : `exported with ${file.model}, the loaded model is ${current ?? 'none'}`;
    const knobs = this.applyImported(file.gate, file.calibrator, file.modelSha256 ?? undefined);
    return {
      knobs,
      verification: `settings valid (knob-settings format ${SETTINGS_FORMAT_VERSION}); ${modelNote}; ${calibratorNote(file.calibrator)}`,
      model: null,
    };
  }

  private async importBundle(path: string): Promise<ApiResult<'bundle.import'>> {
    const { manifest, members, checks } = await readVerifiedBundle(await readUserFile(path, 'bundle'), path);
    const file = manifest.model.files[0]!;
    const loaded = modelOf(this.state)?.description ?? null;
    const matchesLoaded = loaded !== null && loaded.sha256.join() === manifest.model.files.map((f) => f.sha256).join();
    const modelNote = matchesLoaded
      ? 'same model as the one loaded'
      : `tuned with ${file.fileName} (SHA-256 ${file.sha256.slice(0, 12)}...), ${loaded === null ? 'no model is loaded' : 'not the loaded model'}${file.member === null ? '' : '; the bundle holds it'}`;
    const knobs = this.applyImported(
      manifest.gate,
      manifest.calibrator,
      manifest.model.files.map((f) => f.sha256),
    );
    return {
      knobs,
      verification: `bundle sound (format ${manifest.formatVersion}; ${checks.length} checks, ${members.size} members, hashes match); ${modelNote}; ${calibratorNote(manifest.calibrator)}`,
      model: { fileName: file.fileName, sha256: file.sha256, matchesLoaded, inBundle: file.member !== null },
    };
  }

  /**
   * The model a bundle was tuned with, loaded under the bundle's contract, input spec and labels:
   * the bundle's own copy (written once into the app's data folder, named by its SHA-256), or a
   * file the user located, refused unless its SHA-256 is the bundle's.
   */
  async loadBundleModel(
    path: string,
    modelPath: string | undefined,
    discard: boolean,
    calibratorChoice?: 'keep' | 'drop',
  ): Promise<ModelDescription> {
    const { manifest, members } = await readVerifiedBundle(await readUserFile(path, 'bundle'), path);
    const { files } = manifest.model;
    const paths: string[] = [];
    if (modelPath !== undefined) {
      if (files.length > 1)
        throw new KnobError('INVALID_INPUT', `${path}: the bundle's two classifiers load from the bundle only`);
      if (sha256Hex(await readUserFile(modelPath, 'model')) !== files[0]!.sha256)
        throw new KnobError(
          'INVALID_INPUT',
          `${modelPath}: not the model the bundle was tuned with (SHA-256 differs from ${files[0]!.fileName}'s)`,
        );
      paths.push(modelPath);
    } else {
      for (const file of files) {
        if (file.member === null)
          throw new KnobError(
            'INVALID_INPUT',
            `${path}: the model is not in the bundle; locate ${file.fileName} (SHA-256 ${file.sha256.slice(0, 12)}...)`,
          );
        paths.push(await this.bundleModelCopy(file.sha256, members.get(file.member)!));
      }
    }
    return this.loadModel(bundleModelOptions(manifest, paths), discard, calibratorChoice);
  }

  /** A bundle's model as a file in the data folder (beside the recent runs), named by its hash. */
  private async bundleModelCopy(hash: string, bytes: Uint8Array): Promise<string> {
    const folder = join(this.recentRuns === null ? tmpdir() : dirname(this.recentRuns.folder), 'bundle-models');
    await mkdir(folder, { recursive: true });
    const path = join(folder, `${hash}.onnx`);
    try {
      if (sha256Hex(await readUserFile(path, 'model')) === hash) return path;
    } catch {
      // not there yet (or unreadable): written below
    }
    return writeOutputFile(path, bytes);
  }

  /**
   * The imported setting as a whole: its calibrator (or none) replaces the current one, checked
   * against the loaded model before anything is applied, so a calibrator for another model changes
   * nothing.
   */
  private applyImported(gate: GateSettings, calibrator: CalibratorSpec | null, fittedOn?: string[]): Knobs {
    if (calibrator !== null) checkCalibratorFor(calibrator, this.requireModel().description.classCount);
    this.applyGate(gate);
    return this.setCalibrator(calibrator, fittedOn);
  }

  private modelName(): string | null {
    return modelOf(this.state)?.description.paths.join(' + ') ?? null;
  }

  // ---- knobs -------------------------------------------------------------------------------

  getKnobs(): Knobs {
    return this.knobs;
  }

  /** Validates the merged setting as a whole (ranges and combinations), then applies it between frames. */
  setKnobs(patch: Partial<GateSettings>): Knobs {
    return this.applyGate(parseGateSettings({ ...this.knobs.gate, ...patch }));
  }

  private applyGate(gate: GateSettings): Knobs {
    this.knobs = { ...this.knobs, gate, version: this.knobs.version + 1 };
    pipelineOf(this.state)?.setSettings(gate, this.knobs.version);
    this.emit('knobs.changed', this.knobs);
    return this.knobs;
  }

  /**
   * The output calibrator every view applies after fusion (null: none), checked against the
   * loaded model's classes; a new settings version. The live stream uses it from its next frame,
   * the rolling figures are recomputed with it, and replayed views (calibration, A/B, scrubbing,
   * reports) apply it from now on.
   */
  /**
   * The output calibrator for a recording about to become current: a calibrator that reads the
   * model's features is switched off (a new settings version, logged with `why`) when the
   * recording cannot feed it, so no view has to refuse it frame by frame.
   */
  private calibratorFor(featureWidth: number | null, why: string): Calibrator | null {
    const width = this.outputCalibrator?.featureWidth ?? null;
    if (width !== null && featureWidth !== width) {
      this.logger.info(
        { calibrator: describeCalibrator(this.outputCalibrator!.spec) },
        `output calibrator off: ${why}`,
      );
      this.setCalibrator(null);
    }
    return this.outputCalibrator;
  }

  /**
   * `fittedOn` is the model the calibrator belongs to (its files' SHA-256): by default the loaded
   * one (a calibrator fitted in the desk, on this model's recording); an import names its own.
   */
  setCalibrator(spec: CalibratorSpec | null, fittedOn?: string[]): Knobs {
    const model = spec === null ? null : this.requireModel().description;
    if (spec !== null) checkCalibratorFor(spec, model!.classCount);
    const featureWidth = spec === null ? null : calibratorFeatureWidth(spec);
    if (featureWidth !== null) {
      // only a recording that carries the model's features can feed such a calibrator
      const recording = recordingOf(this.state);
      const width = recording?.trace.features?.width ?? null;
      if (recording === null || width === null)
        throw new KnobError(
          'NOT_AVAILABLE',
          `${describeCalibrator(spec!)} reads the model's features of every frame, which this recording does not keep: open the source with "record features", or load a trace recorded with them (knob run --record-features)`,
        );
      if (width !== featureWidth)
        throw new KnobError(
          'INVALID_SETTINGS',
          `the calibrator was fitted on ${featureWidth} features per frame; this recording has ${width}`,
        );
    }
    this.outputCalibrator = spec === null ? null : compileCalibrator(spec);
    const calibratorModel = spec === null ? null : (fittedOn ?? model!.sha256);
    this.knobs = { ...this.knobs, calibrator: spec, calibratorModel, version: this.knobs.version + 1 };
    pipelineOf(this.state)?.setSettings(this.knobs.gate, this.knobs.version, this.outputCalibrator);
    recordingOf(this.state)?.setCalibrator(this.outputCalibrator);
    this.logger.info(
      { calibrator: spec === null ? null : describeCalibrator(spec) },
      spec === null ? 'output calibrator off' : 'output calibrator applied',
    );
    this.emit('knobs.changed', this.knobs);
    return this.knobs;
  }

  /** Calibrators fitted on the recording's fused output at the current gate settings, compared held-out. */
  compareCalibrators(
    request: { methods: CalibrationMethod[]; split: HeldOutSplit; lastFrames?: number },
    signal?: AbortSignal,
  ): Promise<ApiResult<'calibrator.compare'>> {
    return this.metrics.compareCalibrators(this.recordingCopy(signal), this.knobs.gate, request);
  }

  // ---- the rest ----------------------------------------------------------------------------

  /** Something went wrong outside any call (a frame, the inference process): logged and shown. */
  private reportBackground(error: KnobErrorPayload, emit = true): void {
    this.lastError = reportError(this.logger, KnobError.fromPayload(error), { during: this.state.kind });
    if (emit) this.emitState();
  }

  async close(): Promise<void> {
    if (this.keepTimer !== null) clearTimeout(this.keepTimer);
    await this.exclusive(async () => {
      await this.stopLive();
      // Whatever was recorded is kept before the session goes (an app closed while playing).
      await this.keepRecording();
      const state = this.state;
      if (state.kind === 'offline-run') state.controller.abort();
      await modelOf(state)?.close();
      await this.metrics.close();
      this.state = { kind: 'no-model' };
    });
  }
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

function imageToApi(image: FrameImage) {
  return {
    width: image.width,
    height: image.height,
    channels: image.channels,
    base64: Buffer.from(image.pixels).toString('base64'),
  };
}

function toApiUpdate(update: LiveUpdate, labelNames: string[]): ApiEventData<'stream.update'> {
  return {
    recordingId: update.recordingId,
    frame: update.frame,
    sourceFrame: update.sourceFrame,
    timestampSeconds: update.timestampSeconds,
    settingsVersion: update.settingsVersion,
    g: update.g,
    uRef: update.uRef,
    label: update.label,
    ...readoutToApi(update.readout, labelNames),
    framesProcessed: update.framesProcessed,
    framesDropped: update.framesDropped,
    endToEndMs: update.endToEndMs,
    rolling: update.rolling.map((m) => ({ name: m.name, identity: m.identity, value: m.value })),
    image: imageToApi(update.image),
    corruption: update.corruption,
    severity: update.severity,
  };
}

/** The import's line about the calibrator it restored. */
function calibratorNote(calibrator: CalibratorSpec | null): string {
  return calibrator === null ? 'no output calibrator' : `output calibrator: ${describeCalibrator(calibrator)}`;
}
