import type { ApiEvent, ApiEventData, ApiParsedParams, ApiResult } from '../../../src-shared/api/contract';
import { decodeFramePacket } from '../../../src-shared/api/frame-packet';
import type { ModelDescription, ModelOptions } from '../../../src-shared/api/model-options';
import type { SessionState, SourceInfo } from '../../../src-shared/api/session-state';
import { checkScheduleForChannels, type CorruptionSchedule } from '../../../src-shared/corruptions';
import { KnobError, type KnobErrorPayload } from '../../../src-shared/errors';
import type { LabelEdit } from '../../../src-shared/labels/label-layers';
import type { CallContext } from '../calls/call-context';
import type { LivePipeline } from '../engine/live-pipeline';
import type { InferenceClient } from '../inference/inference-client';
import { reportError } from '../logging/internal-error';
import type { Logger } from '../logging/logger';
import type { RecentRunsStore } from '../recent-runs/recent-runs-store';
import type { Recording } from '../recording/recording';
import { runSourceOffline } from '../use-cases/run-offline';
import { toApiUpdate } from './frame-views';
import { livePipelineFor, playInto } from './live-stream';
import { offlineRunOf, openedSource } from './source-opening';
import { KnobStore } from './knob-store';
import { RunKeeper } from './run-keeper';
import { StateMachine } from './state-machine';
import { ModelLease } from './model-lease';
import * as modelLoading from './model-loading';
import { Playback, type PlaybackEnd } from './playback';
import { liveRecording, offlineRecording, type RecordingFactory } from './session-recordings';
import { MODEL_BUSY_KINDS, modelOf, pipelineOf, recordingOf, sourceOf, withSource, type State } from './session-states';
import { assertAllowed, type SessionEvent } from './transitions';
import type { InferenceLauncher } from '../inference/inference-launcher';

/**
 * The session: the state machine behind the API. Its state is one union (session-states.ts); every
 * event is checked against SESSION_TRANSITIONS (transitions.ts) before it acts, its discard rule
 * is read from the table, and `enter` refuses a next state the table does not list for the event,
 * then logs it and tells every view. Transitions run one at a time. Who holds the model outside the
 * states (a load in progress, a probe recording) is the ModelLease.
 *
 * What is not a transition lives in the services the handler map composes (src-main/core/services):
 * recording views, measurements, bundles, recent runs; the knobs are the KnobStore. Nothing that
 * replaces a recording with unsaved work happens unless the caller says `discard: true`.
 */
export type EmitEvent = <E extends ApiEvent>(event: E, data: ApiEventData<E>) => void;

export interface SessionOptions {
  emit: EmitEvent;
  logger: Logger;
  /** Where recordings are kept as recent runs; null keeps none (a recording is then only in memory). */
  recentRuns?: RecentRunsStore | null;
  /** How the inference process is started (default child_process.fork; Electron's utilityProcess). */
  inferenceLauncher?: InferenceLauncher;
}

export type SourceOpenParams = ApiParsedParams<'source.open'>;

export class Session {
  readonly knobs: KnobStore;
  readonly lease = new ModelLease();
  private readonly machine: StateMachine;
  private readonly keeper: RunKeeper;
  private readonly playback = new Playback();
  private readonly recordings: RecordingFactory;
  private lastError: KnobErrorPayload | null = null;
  private readonly emit: EmitEvent;
  private readonly logger: Logger;
  private readonly inferenceLauncher: InferenceLauncher | undefined;

  constructor(options: SessionOptions) {
    this.emit = options.emit;
    this.logger = options.logger;
    this.inferenceLauncher = options.inferenceLauncher;
    this.keeper = new RunKeeper(options.recentRuns ?? null, this.logger, {
      kept: () => this.announce(),
      listed: (runs) => this.emit('runs.changed', runs),
      failed: (error) => this.reportBackground(error, false),
    });
    this.machine = new StateMachine(
      this.logger,
      this.lease,
      () => this.keepCurrent(),
      (next) => {
        this.announce();
        // A recording that stops changing (paused, a run finished) is kept as a recent run.
        if (next.kind === 'paused' && this.keeper.enabled) void this.machine.exclusive(() => this.keepCurrent());
      },
    );
    this.knobs = new KnobStore(this.logger, (knobs) => this.emit('knobs.changed', knobs));
    this.recordings = { nextId: 1, knobs: this.knobs };
    // a knob change reaches the live stream between frames and the rolling figures at once
    let applied = { calibrator: this.knobs.calibrator, mode: this.knobs.current.gate.mode };
    this.knobs.onChange((knobs, calibrator) => {
      pipelineOf(this.state)?.setSettings(knobs.gate, knobs.version, calibrator);
      // the mode says whether a condition-aware calibrator's hysteresis runs over the recording
      const mode = knobs.gate.mode;
      if (calibrator !== applied.calibrator || (calibrator?.condition !== undefined && mode !== applied.mode))
        recordingOf(this.state)?.setCalibrator(calibrator, mode);
      applied = { calibrator, mode };
    });
  }

  private get state(): State {
    return this.machine.state;
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

  /** The current state, read-only, for the services. */
  get current(): State {
    return this.state;
  }

  /** Throws NOT_AVAILABLE unless the current state accepts `event` (for the services' same-state events). */
  allow(event: SessionEvent): void {
    assertAllowed(event, this.state.kind);
  }

  /** Tells every view the session's description (after a change within a state). */
  announce(): SessionState {
    const state = this.describe();
    this.emit('session.state', state);
    return state;
  }

  requireModel(): InferenceClient {
    const model = modelOf(this.state);
    if (model === null) throw new KnobError('NOT_AVAILABLE', 'no model is loaded (model.load first)');
    return model;
  }

  requireRecording(): Recording {
    const recording = recordingOf(this.state);
    if (recording === null)
      throw new KnobError('NOT_AVAILABLE', 'no recording yet (play a source, run it offline or load a trace)');
    return recording;
  }

  /** The model, when no stream is running it and none is loading (a probe runs it over its own streams). */
  requireIdleModel(what: string): InferenceClient {
    this.lease.refuseWhileLoading(what);
    if (MODEL_BUSY_KINDS.includes(this.state.kind))
      throw new KnobError('NOT_AVAILABLE', `${what} runs the model: pause the stream first`);
    return this.requireModel();
  }

  /** Keeps the current recording as a recent run (run-keeper.ts). */
  private keepCurrent(): Promise<void> {
    return this.keeper.keep(this.machine.state, this.knobs.current.gate, this.playback.position);
  }

  /** Stops playing and closes the live pipeline; the model and the source stay. */
  private async stopLive(): Promise<void> {
    await this.playback.stop();
    const pipeline = pipelineOf(this.state);
    if (pipeline !== null) {
      await pipeline.drained();
      pipeline.close();
    }
  }

  // ---- transitions -------------------------------------------------------------------------

  async loadModel(
    options: ModelOptions,
    discard: boolean,
    choice?: modelLoading.CalibratorChoice,
  ): Promise<ModelDescription> {
    const resolved = modelLoading.withDefaultModelPath(options);
    let keep = true;
    const check = async (): Promise<void> => {
      this.lease.refuseWhileProbing('loading a model');
      // before anything starts: a calibrator of another model is the caller's decision (model-binding.ts)
      keep = await modelLoading.calibratorStays(resolved, this.knobs.current, choice);
    };
    return this.machine.run('model.load', { discard, check, loadsModel: true }, async () => {
      // Loaded before anything is torn down: a model that fails to load changes nothing.
      const client = await modelLoading.startModel(resolved, this.inferenceLauncher, this.logger, (error) =>
        this.reportBackground(error),
      );
      await this.stopLive();
      const previous = modelOf(this.state);
      this.playback.resetClock();
      this.playback.position = 0;
      this.lastError = null;
      this.machine.enter({ kind: 'ready', model: client, source: null }, 'model.load');
      await previous?.close();
      modelLoading.settleCalibrator(this.knobs, client.description, keep, (error) => this.reportBackground(error));
      return client.description;
    });
  }

  async openSource(params: SourceOpenParams, call: CallContext): Promise<SourceInfo> {
    return this.machine.run('source.open', { discard: params.discard }, async () => {
      const model = this.requireModel();
      const opened = await openedSource(model, params, call);
      const { info } = opened;
      await this.stopLive();
      this.playback.resetClock();
      this.playback.position = 0;
      this.lastError = null;
      this.machine.enter({ kind: 'ready', model, source: opened }, 'source.open');
      this.logger.info({ kind: info.kind, source: info.description }, 'source opened');
      return info;
    });
  }

  /** The camera's device label and capture resolution, once the renderer captures: provenance. */
  describeCamera(camera: { deviceLabel: string; width: number; height: number }): SourceInfo {
    const source = sourceOf(this.state);
    if (source === null || source.info.kind !== 'camera')
      throw new KnobError('NOT_AVAILABLE', 'the open source is not a camera (source.open with kind camera first)');
    const identity = { kind: 'camera' as const, ...camera };
    const described = { ...source, info: { ...source.info, identity } };
    this.machine.describe(withSource(this.state, described));
    const recording = recordingOf(this.state);
    if (recording !== null && recording.appendable) recording.noteSourceIdentity(identity);
    this.announce();
    return described.info;
  }

  /** A new corruption schedule for the open source; a running stream applies it from its next frame. */
  async configureSource(schedule: CorruptionSchedule, seed?: number): Promise<SessionState> {
    return this.machine.run('source.configure', {}, async () => {
      const source = sourceOf(this.state);
      if (source === null) throw new KnobError('NOT_AVAILABLE', 'no source is open (source.open first)');
      checkScheduleForChannels(schedule, this.requireModel().description.input.channels);
      const configured = { ...source, schedule, seed: seed ?? source.seed };
      pipelineOf(this.state)?.setSchedule(configured.schedule, configured.seed);
      this.lastError = null;
      // an event within the state: the same state with the new schedule, told to every view
      this.machine.describe(withSource(this.state, configured));
      this.announce();
      this.logger.info({ schedule: configured.schedule, seed: configured.seed }, 'corruption schedule changed');
      return this.describe();
    });
  }

  /** Plays the open source (or starts the camera stream) into the live recording. */
  async start(params: { speed?: number; loop?: boolean; discard: boolean }): Promise<SessionState> {
    return this.machine.run('stream.start', { check: () => this.lease.refuseWhileProbing('playing') }, async () => {
      const model = this.requireModel();
      const source = sourceOf(this.state);
      if (source === null) throw new KnobError('NOT_AVAILABLE', 'no source is open (source.open first)');
      if (params.speed !== undefined) this.playback.setSpeed(params.speed);
      if (params.loop !== undefined) this.playback.loop = params.loop;
      let pipeline = pipelineOf(this.state);
      let recording = recordingOf(this.state);
      // 'unless-live': only a new recording discards the current one
      if (pipeline === null || recording === null || !recording.appendable) {
        await this.machine.requireDiscardable('stream.start', params.discard);
        recording = liveRecording(this.recordings, model.description, source);
        this.playback.resetClock();
        pipeline = livePipelineFor(model, source, recording, this.knobs, {
          onUpdate: (update) => this.emit('stream.update', toApiUpdate(update, model.description.labelNames)),
          onError: (error) => this.reportBackground(error),
        });
      }
      this.lastError = null;
      this.machine.enter(
        { kind: source.frames === null ? 'camera' : 'playing', model, source, recording, pipeline },
        'stream.start',
      );
      const live = pipeline;
      if (source.frames !== null)
        void playInto(this.playback, source.frames, live).then((end) => this.onPlaybackEnd(end, live));
      return this.describe();
    });
  }

  /** The file ended or failed while playing: pause, keeping the recording. */
  private async onPlaybackEnd(end: PlaybackEnd, pipeline: LivePipeline): Promise<void> {
    if (end.reason === 'stopped') return;
    await this.machine.exclusive(async () => {
      const state = this.state;
      if (state.kind !== 'playing' || state.pipeline !== pipeline) return;
      assertAllowed('stream.end', state.kind);
      await pipeline.idle();
      if (end.reason === 'failed') this.reportBackground(end.error, false);
      this.machine.enter({ ...state, kind: 'paused' }, 'stream.end');
    });
  }

  /** Pauses; the recording and the gate state stay. Elsewhere there is nothing to stop. */
  async stop(): Promise<SessionState> {
    return this.machine.run('stream.stop', {}, async () => {
      const state = this.state;
      if (state.kind !== 'playing' && state.kind !== 'camera') return this.describe();
      await this.playback.stop();
      await state.pipeline.idle();
      this.machine.enter({ ...state, kind: 'paused' }, 'stream.stop');
      return this.describe();
    });
  }

  async setPlayback(params: { speed?: number; loop?: boolean }): Promise<SessionState> {
    this.allow('stream.playback');
    if (params.speed !== undefined) this.playback.setSpeed(params.speed);
    if (params.loop !== undefined) this.playback.loop = params.loop;
    return this.announce();
  }

  /** Moves the source position (playing: at once); the recording is kept and its clock runs on. */
  async seek(frame: number): Promise<SessionState> {
    this.allow('stream.seek');
    const source = sourceOf(this.state);
    if (source?.frames == null) throw new KnobError('NOT_AVAILABLE', 'seeking needs an open file source');
    this.playback.seek(frame, source.info.frameCount);
    return this.announce();
  }

  resetGate(): SessionState {
    this.allow('stream.resetGate');
    pipelineOf(this.state)?.resetGate();
    return this.describe();
  }

  /**
   * A frame from the binary path; refused unless a camera stream is running, and checked against
   * the model before it can reach the recording (its label must be a class of the model, or -1).
   */
  pushFrame(packet: Uint8Array): void {
    const frame = decodeFramePacket(packet);
    this.allow('camera.frame');
    if (this.state.kind !== 'camera') return;
    const classCount = this.state.model.description.classCount;
    if (!(frame.label === -1 || (frame.label >= 0 && frame.label < classCount)))
      throw new KnobError(
        'BAD_REQUEST',
        `frame packet label ${frame.label} is not a class of the model (0..${classCount - 1}, or -1)`,
      );
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
    const request = { discard: params.discard, check: () => this.lease.refuseWhileProbing('an offline run') };
    const { model, source, controller } = await this.machine.run('offline.start', request, async () => {
      const model = this.requireModel();
      const source = sourceOf(this.state);
      if (source?.frames == null)
        throw new KnobError('NOT_AVAILABLE', 'an offline run needs an open file source (not a camera)');
      await this.stopLive();
      const controller = new AbortController();
      this.machine.enter({ kind: 'offline-run', model, source, controller }, 'offline.start');
      return { model, source, controller };
    });
    // stopped by the call's cancellation or by the state's controller (stream.stop, close)
    const stoppable = { ...call, signal: AbortSignal.any([call.signal, controller.signal]) };
    const run = offlineRunOf(model, source, this.knobs.current.gate, params.maxFrames);
    const result = await runSourceOffline(run, stoppable);
    await this.machine.run('offline.end', {}, async () => {
      if (result.framesProcessed === 0) return this.machine.enter({ kind: 'ready', model, source }, 'offline.end');
      const recording = offlineRecording(this.recordings, model.description, source, result);
      this.machine.enter({ kind: 'paused', model, source, recording, pipeline: null }, 'offline.end');
    });
    if (result.error !== null)
      this.logger.warn({ code: result.error.code }, `offline run stopped: ${result.error.message}`);
    return { framesProcessed: result.framesProcessed, wallMs: result.wallMs, error: result.error };
  }

  /** A new, empty recording (the next play starts it); the source position stays. */
  async resetRecording(discard: boolean): Promise<SessionState> {
    return this.machine.run('recording.reset', { discard }, async () => {
      await this.stopLive();
      this.playback.resetClock();
      const model = modelOf(this.state);
      this.machine.enter(
        model === null ? { kind: 'no-model' } : { kind: 'ready', model, source: sourceOf(this.state) },
        'recording.reset',
      );
      return this.describe();
    });
  }

  /**
   * A complete recording (a saved trace, a recent run) becomes the current one, paused; model and
   * source stay. `make` reads it (after the discard rule) and builds it with the session's factory;
   * `position` moves the open source there when it is the one the recording was made from.
   */
  async loadRecording(
    discard: boolean,
    make: (
      recordings: RecordingFactory,
    ) => Promise<{ recording: Recording; position?: { frame: number; source: { kind: string; path: string | null } } }>,
  ): Promise<Recording> {
    return this.machine.run('trace.load', { discard }, async () => {
      const { recording, position } = await make(this.recordings);
      await this.stopLive();
      const source = sourceOf(this.state);
      if (
        source?.frames != null &&
        position !== undefined &&
        source.info.kind === position.source.kind &&
        source.info.path === position.source.path
      )
        this.playback.seek(position.frame, source.info.frameCount);
      this.machine.enter(
        { kind: 'paused', model: modelOf(this.state), source, recording, pipeline: null },
        'trace.load',
      );
      return recording;
    });
  }

  /** One change of the current recording's labels, then what every view needs to follow it. */
  changeLabels(step: (recording: Recording) => LabelEdit | null): { recording: Recording; edit: LabelEdit | null } {
    this.allow('recording.label');
    const recording = this.requireRecording();
    const edit = step(recording);
    this.emit('recording.changed', { recording: recording.summary(), rolling: recording.rolling() });
    if (this.state.kind === 'paused')
      this.keeper.soon(() => this.state.kind === 'paused' && void this.machine.exclusive(() => this.keepCurrent()));
    return { recording, edit };
  }

  /** Something went wrong outside any call (a frame, the inference process): logged and shown. */
  private reportBackground(error: KnobErrorPayload, emit = true): void {
    this.lastError = reportError(this.logger, KnobError.fromPayload(error), { during: this.state.kind });
    if (emit) this.announce();
  }

  async close(): Promise<void> {
    this.keeper.cancel();
    await this.machine.exclusive(async () => {
      await this.stopLive();
      // Whatever was recorded is kept before the session goes (an app closed while playing).
      await this.keepCurrent();
      const state = this.state;
      if (state.kind === 'offline-run') state.controller.abort();
      await modelOf(state)?.close();
      this.machine.reset();
    });
  }
}
