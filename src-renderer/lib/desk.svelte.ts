import type { ApiEventData, ApiParams, ApiResult } from '../../src-shared/api/contract';
import type { KnobApi } from '../../src-shared/api/client';
import type { ModelDescription } from '../../src-shared/api/model-options';
import type { RecentRun, RecentRuns } from '../../src-shared/api/recent-runs';
import type { CalibrationMethod, CalibratorSpec, HeldOutSplit } from '../../src-shared/calibrators';
import type { RecordingSummary, SessionState, SourceInfo, SourceKind } from '../../src-shared/api/session-state';
import { Labelling, type LabelEdit } from './labelling.svelte';
import type { CorruptionScheduleInput } from '../../src-shared/corruptions/schedule';
import { KnobError } from '../../src-shared/errors';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../src-shared/gate/gate-settings';
import { listCameras, startCamera, type CameraCapture, type CameraDevice } from './camera-capture';
import { StreamHistory } from './stream-history';
import type { ShellCommand } from '../../src-shared/api/bridge';
import { fileKindOf } from '../../src-shared/api/file-kinds';
import { errorText } from './desk-errors';
import { Tuning } from './tuning.svelte';
import { ReplayedViews } from './replayed-views.svelte';

/**
 * The desk's state, shared by its panels: the session as the backend last described it (state,
 * model, source, playback, recording), the live update, the metrics, and the operator's knob
 * settings, with one error slot per area so a failure is shown next to what caused it. Every call
 * goes through the typed API; nothing here computes a number the desk shows (they come from
 * src-shared, in the backend or in a component's $derived). Backend results are replaced whole,
 * never mutated, so they are raw state (no deep proxies: a live update arrives 30 times a second).
 *
 * Views computed from a recording (metrics, A/B) say which recording and settings they describe; when
 * another recording becomes current they are cleared. Anything that would discard a recording with
 * unsaved work asks the operator first (the backend refuses it otherwise).
 */
export type { SourceKind };
type Area =
  | 'model'
  | 'source'
  | 'stream'
  | 'knobs'
  | 'metrics'
  | 'connection'
  | 'compare'
  | 'export'
  | 'runs'
  | 'calibrators'
  | 'probe'
  | 'analysis';

const SETTINGS_KEY = 'knob-studio.settings.v1';

/**
 * The schedule the desk opens the embedded stream with on first start (and its Source panel shows):
 * gaussian noise stepping to severity 3 at frame 150 and back to clean at frame 450, so the gate's
 * response to a shift is visible within seconds.
 */
export const FIRST_START_SCHEDULE: CorruptionScheduleInput = {
  kind: 'step',
  corruption: 'gaussian_noise',
  levels: [
    { atFrame: 0, severity: 0 },
    { atFrame: 150, severity: 3 },
    { atFrame: 450, severity: 0 },
  ],
};

export { errorText };

type Rolling = ApiEventData<'stream.update'>['rolling'];

function rollingColumns(rolling: Rolling): { rollingAccuracy: number; rollingConfidence: number } {
  const value = (name: string): number => rolling.find((m) => m.name === name)?.value ?? Number.NaN;
  return { rollingAccuracy: value('accuracy'), rollingConfidence: value('mean confidence') };
}

export interface Confirmation {
  title: string;
  message: string;
  confirmLabel: string;
  /** The other answer's label (default Cancel); Escape gives that answer too. */
  cancelLabel: string;
  answer(confirmed: boolean): void;
}

export class Desk {
  session = $state.raw<SessionState | null>(null);
  update = $state.raw<ApiEventData<'stream.update'> | null>(null);
  metrics = $state.raw<ApiResult<'metrics.snapshot'> | null>(null);
  gate = $state<GateSettings>({ ...DEFAULT_GATE_SETTINGS });
  version = $state(0);
  speed = $state(1);
  loop = $state(false);
  /** Counts source.open calls that succeeded (a reopened source with a new schedule looks the same). */
  sourceGeneration = $state(0);
  /** The recorded frame on screen while scrubbing (paused); null follows the live stream. */
  scrubbed = $state.raw<ApiResult<'trace.frame'> | null>(null);
  /** Calibration panel options: which recorded frames, and how to break the headline values down. */
  metricsWindow = $state<number | null>(null);
  metricsGroupBy = $state<ApiResult<'metrics.snapshot'>['groupBy']>('none');
  errors = $state<Record<Area, string | null>>({
    model: null,
    source: null,
    stream: null,
    knobs: null,
    metrics: null,
    connection: null,
    compare: null,
    export: null,
    runs: null,
    calibrators: null,
    probe: null,
    analysis: null,
  });
  /** Something the desktop shell told the operator (a window reloaded after a crash); null when none. */
  notice = $state<string | null>(null);
  busy = $state<Record<'model' | 'source' | 'metrics' | 'calibrators' | 'probe' | 'analysis', boolean>>({
    model: false,
    source: false,
    metrics: false,
    calibrators: false,
    probe: false,
    analysis: false,
  });
  /** Bumped on every update so charts know to redraw (the history itself is not reactive). */
  historyRevision = $state(0);
  readonly history = new StreamHistory(1800);
  compareResult = $state.raw<ApiResult<'metrics.compare'> | null>(null);
  slots = $state<{ a: GateSettings | null; b: GateSettings | null }>({ a: null, b: null });
  /** Labelling mode, corrections with undo, the metrics' choice of labels, label files (labelling.svelte.ts). */
  readonly labelling: Labelling;
  exported = $state.raw<ApiResult<'bundle.export'> | null>(null);
  imported = $state<string | null>(null);
  /** The last imported bundle's model, to load when it is not the one loaded. */
  importedModel = $state<(NonNullable<ApiResult<'bundle.import'>['model']> & { bundlePath: string }) | null>(null);
  /** The long call in progress (offline run, a slow source), from 'work.progress'; null when none. */
  work = $state.raw<ApiEventData<'work.progress'> | null>(null);
  offlineResult = $state.raw<ApiResult<'stream.runOffline'> | null>(null);
  cameras = $state<CameraDevice[]>([]);
  cameraDeviceId = $state<string | null>(null);
  /** The output calibrator every view applies after fusion (null: none), and the last comparison of calibrators. */
  calibrator = $state.raw<CalibratorSpec | null>(null);
  /** The SHA-256 of the model the calibrator was fitted on (model binding: shown when it is not the loaded one). */
  calibratorModel = $state.raw<string[] | null>(null);
  /** The applied calibrator belongs to another model than the loaded one (kept by the operator's choice). */
  get calibratorOfAnotherModel(): boolean {
    const fitted = this.calibratorModel;
    const loaded = this.model?.sha256 ?? null;
    return this.calibrator !== null && fitted !== null && loaded !== null && fitted.join('+') !== loaded.join('+');
  }
  calibratorComparison = $state.raw<ApiResult<'calibrator.compare'> | null>(null);
  /** Recent runs as the backend keeps them (null until listed), and the last comparison of two. */
  runs = $state.raw<RecentRuns | null>(null);
  runsComparison = $state.raw<ApiResult<'runs.compare'> | null>(null);
  /** The step probe at the knobs it was last computed at (Probes tab), and its parameters. */
  stepProbe = $state.raw<ApiResult<'probe.step'> | null>(null);
  stepProbeParams = $state.raw<ApiParams<'probe.step'> | null>(null);
  frequencyProbe = $state.raw<ApiResult<'probe.frequency'> | null>(null);
  frequencyProbeParams = $state.raw<ApiParams<'probe.frequency'> | null>(null);
  /** The Tune tab: the last tune of the current recording, Apply inside the knobs' ranges, Undo (tuning.svelte.ts). */
  readonly tuning: Tuning;
  /** The charts and the frame on screen replayed at new knobs while paused; why the rolling chart is empty. */
  readonly replayed: ReplayedViews;
  /** The paper's analyses of the current recording (Analyses tab), at the knobs of `settingsVersion`. */
  analyses = $state.raw<ApiResult<'analysis.run'> | null>(null);
  /** The question on screen (a discard to confirm), answered through its buttons. */
  confirmation = $state.raw<Confirmation | null>(null);
  private camera: CameraCapture | null = null;
  private offlineRun: AbortController | null = null;
  private probeRun: AbortController | null = null;

  private inFlight = false;
  private pending: Partial<GateSettings> | null = null;

  constructor(private readonly api: KnobApi) {
    this.labelling = new Labelling({
      api,
      shownFrame: () => this.scrubbed ?? this.update,
      classCount: () => this.model?.classCount ?? 0,
      layers: () => this.session?.recording?.labels ?? null,
      labelName: (classIndex) => this.model?.labelNames[classIndex] ?? String(classIndex),
      adopt: (recording, edit) => this.adoptLabels(recording, edit),
    });
    this.replayed = new ReplayedViews({
      api,
      history: this.history,
      recording: () => this.session?.recording ?? null,
      running: () => this.running,
      historyChanged: () => this.historyRevision++,
      scrubbed: () => this.scrubbed,
      update: () => this.update,
      showScrubbed: (frame) => (this.scrubbed = frame),
      showUpdate: (update) => (this.update = update),
      report: (error) => (this.errors.stream = error === null ? null : errorText(error)),
    });
    this.tuning = new Tuning({
      api,
      recordingId: () => this.recordingId,
      gate: () => this.gate,
      changeKnobs: (patch) => this.changeKnobs(patch),
    });
  }

  get model(): ModelDescription | null {
    return this.session?.model ?? null;
  }

  get source(): SourceInfo | null {
    return this.session?.source ?? null;
  }

  get running(): boolean {
    return this.session?.state === 'playing' || this.session?.state === 'camera';
  }

  get recordingId(): number | null {
    return this.session?.recording?.id ?? null;
  }

  /** The source frame play resumes from (follows the live stream while it plays). */
  get position(): number {
    const update = this.update;
    if (this.running && update !== null && update.recordingId === this.recordingId) return update.sourceFrame + 1;
    return this.session?.playback.position ?? 0;
  }

  get framesProcessed(): number {
    return this.session?.recording?.frameCount ?? 0;
  }

  get framesDropped(): number {
    return this.session?.recording?.framesDropped ?? 0;
  }

  private async attempt<T>(area: Area, work: () => Promise<T>): Promise<T | null> {
    try {
      const result = await work();
      this.errors[area] = null;
      return result;
    } catch (error) {
      this.errors[area] = errorText(error);
      return null;
    }
  }

  /** Asks the operator; resolves with the answer. */
  confirm(title: string, message: string, confirmLabel: string, cancelLabel = 'Cancel'): Promise<boolean> {
    this.confirmation?.answer(false);
    return new Promise((resolve) => {
      this.confirmation = {
        title,
        message,
        confirmLabel,
        cancelLabel,
        answer: (confirmed) => {
          this.confirmation = null;
          resolve(confirmed);
        },
      };
    });
  }

  /**
   * Runs a call that may discard the current recording: first without `discard`; when the backend
   * says it would discard unsaved work, the operator decides, and only a yes repeats it with
   * `discard: true`. Resolves to null when the operator said no.
   */
  private async discarding<T>(work: (discard: boolean) => Promise<T>): Promise<T | null> {
    try {
      return await work(false);
    } catch (error) {
      if (!(error instanceof KnobError && error.code === 'WOULD_DISCARD')) throw error;
      const confirmed = await this.confirm(
        'Discard the recording?',
        `${error.message}. Export it first to keep it.`,
        'Discard it',
      );
      return confirmed ? work(true) : null;
    }
  }

  /**
   * Runs a model load that may meet an output calibrator fitted on another model: first without a
   * choice; when the backend asks, the operator keeps it on the new model or drops it (Escape drops).
   */
  private async choosingCalibrator<T>(work: (choice: 'keep' | 'drop' | undefined) => Promise<T>): Promise<T> {
    try {
      return await work(undefined);
    } catch (error) {
      if (!(error instanceof KnobError && error.code === 'CALIBRATOR_OF_ANOTHER_MODEL')) throw error;
      const keep = await this.confirm('Keep the output calibrator?', error.message, 'Keep it', 'Drop it');
      return work(keep ? 'keep' : 'drop');
    }
  }

  /**
   * Start-up: subscribe, then take the session as the backend has it. A page reloaded on a running
   * backend finds its recording and position as they were. A fresh backend gets the saved knob
   * settings, then: when it keeps recent runs and has one, the last session comes back (its model,
   * its source and schedule, its recording, and the position it left off at; paused); otherwise
   * (the first start) the default model and the embedded stream under FIRST_START_SCHEDULE, playing.
   */
  async start(): Promise<() => void> {
    const offs = [
      this.api.on('knobs.changed', (k) => this.applyKnobs(k)),
      this.api.on('session.state', (s) => this.adoptSession(s)),
      this.api.on('stream.update', (u) => this.onUpdate(u)),
      this.api.on('recording.changed', (c) => this.onRecordingChanged(c)),
      this.api.on('frame.rejected', (e) => {
        this.errors.stream = e.message;
        this.frameErrorShown = true;
      }),
      this.api.on('work.progress', (p) => (this.work = p.finished ? null : p)),
      this.api.on('runs.changed', (r) => (this.runs = r)),
    ];
    const knobs = await this.attempt('connection', () => this.api.call('knobs.get', {}));
    if (knobs) this.applyKnobs(knobs);
    const session = await this.attempt('connection', () => this.api.call('session.get', {}));
    if (session === null) return () => offs.forEach((off) => off());
    this.adoptSession(session);
    this.speed = session.playback.speed;
    this.loop = session.playback.loop;
    const runs = await this.attempt('runs', () => this.api.call('runs.list', {}));
    if (runs) this.runs = runs;
    if (session.state === 'no-model') {
      const saved = this.restoreSettings();
      if (saved) this.changeKnobs(saved);
      const last = runs?.runs[0] ?? null;
      if (last !== null && last.source !== null) await this.resumeRun(last);
      else {
        await this.loadModel({ path: 'default' });
        if (this.model) await this.openSource({ kind: 'embedded', schedule: FIRST_START_SCHEDULE });
        if (this.source) await this.play();
      }
    }
    return () => offs.forEach((off) => off());
  }

  /** The last session again: its knobs, its model (else the default), its source and schedule, its recording. */
  private async resumeRun(run: RecentRun): Promise<void> {
    this.changeKnobs(run.settings);
    const paths = run.model?.split(' + ') ?? [];
    if (paths.length > 0) await this.loadModel({ path: paths[0], secondPath: paths[1] });
    if (this.model === null) await this.loadModel({ path: 'default' });
    const source = run.source!;
    if (this.model)
      await this.openSource({
        kind: source.kind,
        path: source.path ?? undefined,
        frameRateHz: source.frameRateHz,
        schedule: run.schedule ?? undefined,
        seed: run.seed,
      });
    await this.openRun(run.id);
  }

  /** A recent run becomes the recording (the source moves to where it left off, when it is open). */
  async openRun(id: string): Promise<void> {
    this.stopCamera();
    const opened = await this.attempt('runs', () =>
      this.discarding((discard) => this.api.call('runs.open', { id, discard })),
    );
    if (opened) {
      const state = await this.attempt('runs', () => this.api.call('session.get', {}));
      if (state) this.adoptSession(state);
    }
  }

  /** Calibrators fitted on the recording's fused output and compared on held-out frames. */
  async compareCalibrators(methods: CalibrationMethod[], split: HeldOutSplit): Promise<void> {
    this.busy.calibrators = true;
    const result = await this.attempt('calibrators', () =>
      this.api.call('calibrator.compare', { methods, split, lastFrames: this.metricsWindow ?? undefined }),
    );
    this.busy.calibrators = false;
    if (result && result.recordingId === this.recordingId) this.calibratorComparison = result;
  }

  /**
   * The step probe at the current knobs: the first call records it through the model (progress on
   * the work bar, cancellable there), later ones with the same parameters replay it.
   */
  async runStepProbe(params: ApiParams<'probe.step'>): Promise<void> {
    const result = await this.probe('probe.step', params);
    if (result) [this.stepProbe, this.stepProbeParams] = [result, params];
  }

  /** The frequency probe at the current knobs, recorded once and replayed as the step probe is. */
  async runFrequencyProbe(params: ApiParams<'probe.frequency'>): Promise<void> {
    const result = await this.probe('probe.frequency', params);
    if (result) [this.frequencyProbe, this.frequencyProbeParams] = [result, params];
  }

  /**
   * Forgets the probes shown that were recorded through a model or over a source now replaced, so
   * that a knob change replays what is shown instead of recording anew (a model pass nobody asked
   * for). A new model replaces every recording; a new source those over the open source.
   */
  private dropProbes(which: 'all' | 'open-source'): void {
    if (which === 'all' || this.stepProbeParams?.over === 'open-source')
      [this.stepProbe, this.stepProbeParams] = [null, null];
    if (which === 'all' || this.frequencyProbeParams?.over === 'open-source')
      [this.frequencyProbe, this.frequencyProbeParams] = [null, null];
  }

  /** Stops the probe being recorded (the parameters of the last one shown stay). */
  cancelProbe(): void {
    this.probeRun?.abort();
  }

  /** The probes shown again at the knobs now, when they are of older knobs (a replay, no model). */
  async refreshProbes(): Promise<void> {
    if (this.busy.probe) return;
    if (this.stepProbeParams !== null && this.stepProbe?.settingsVersion !== this.version)
      await this.runStepProbe(this.stepProbeParams);
    if (this.frequencyProbeParams !== null && this.frequencyProbe?.settingsVersion !== this.version)
      await this.runFrequencyProbe(this.frequencyProbeParams);
  }

  private async probe<M extends 'probe.step' | 'probe.frequency'>(
    method: M,
    params: ApiParams<M>,
  ): Promise<ApiResult<M> | null> {
    this.busy.probe = true;
    const controller = new AbortController();
    this.probeRun = controller;
    const result = await this.attempt('probe', () => this.api.call(method, params, { signal: controller.signal }));
    this.probeRun = null;
    this.busy.probe = false;
    return result;
  }

  /** The paper's analyses of the current recording at the knobs now, by replay (no model). */
  async runAnalyses(): Promise<void> {
    this.busy.analysis = true;
    const result = await this.attempt('analysis', () => this.api.call('analysis.run', {}));
    this.busy.analysis = false;
    if (result && result.recordingId === this.recordingId) this.analyses = result;
  }

  /** Applies a calibrator after fusion in every view (null switches it off). */
  async setCalibrator(spec: CalibratorSpec | null): Promise<void> {
    const knobs = await this.attempt('calibrators', () => this.api.call('calibrator.set', { calibrator: spec }));
    if (knobs) this.applyKnobs(knobs);
  }

  /** Two recent runs side by side, each at the settings it was recorded with. */
  async compareRuns(a: string, b: string): Promise<void> {
    const result = await this.attempt('runs', () => this.api.call('runs.compare', { a, b }));
    if (result) this.runsComparison = result;
  }

  async setRunsLimit(limitBytes: number): Promise<void> {
    const runs = await this.attempt('runs', () => this.api.call('runs.setLimit', { limitBytes }));
    if (runs) this.runs = runs;
  }

  /** The backend's word on the session; views of another recording are cleared. */
  private adoptSession(next: SessionState): void {
    const previousRecording = this.recordingId;
    this.session = next;
    this.errors.stream = next.error === null ? null : errorText(KnobError.fromPayload(next.error));
    if ((next.recording?.id ?? null) !== previousRecording) {
      this.resetView();
      // A recording that arrives complete computes its calibration by itself (busy shown): an offline
      // run's (also when cancelled), a loaded trace's, a reopened recent run's.
      if (next.recording !== null && next.recording.origin !== 'live' && next.recording.frameCount > 0)
        void this.refreshMetrics();
      // A recording not watched live (an offline run, a trace, a recent run): its gate over time.
      if (next.recording !== null && next.recording.origin !== 'live') void this.replayed.loadSeries();
    }
  }

  async loadModel(params: ApiParams<'model.load'>): Promise<void> {
    this.busy.model = true;
    const model = await this.attempt('model', () =>
      this.choosingCalibrator((calibrator) =>
        this.discarding((discard) => this.api.call('model.load', { ...params, discard, calibrator })),
      ),
    );
    this.busy.model = false;
    if (model) {
      this.resetView();
      this.dropProbes('all');
    }
  }

  async openSource(params: {
    kind: SourceKind;
    path?: string;
    frameRateHz?: number;
    schedule?: CorruptionScheduleInput;
    seed?: number;
    recordFeatures?: boolean;
    classMap?: string;
  }): Promise<void> {
    this.stopCamera();
    this.busy.source = true;
    const source = await this.attempt('source', () =>
      this.discarding((discard) => this.api.call('source.open', { ...params, discard })),
    );
    this.busy.source = false;
    if (source) {
      this.sourceGeneration++;
      this.resetView();
      this.dropProbes('open-source');
    }
  }

  /**
   * A new corruption schedule (and seed) for the open source, in place: a playing stream uses it
   * from its next frame and the recording keeps going. A frame error it caused goes with it.
   */
  async configureSource(schedule: CorruptionScheduleInput, seed: number): Promise<boolean> {
    const state = await this.attempt('source', () => this.api.call('source.configure', { schedule, seed }));
    if (state === null) return false;
    this.adoptSession(state);
    this.errors.stream = null;
    return true;
  }

  private resetView(): void {
    this.update = null;
    this.metrics = null;
    this.compareResult = null;
    this.calibratorComparison = null;
    this.tuning.reset();
    this.analyses = null;
    this.scrubbed = null;
    this.offlineResult = null;
    this.history.clear();
    this.historyRevision++;
  }

  private stopCamera(): void {
    this.camera?.stop();
    this.camera = null;
  }

  async play(): Promise<void> {
    this.scrubbed = null;
    const state = await this.attempt('stream', () =>
      this.discarding((discard) => this.api.call('stream.start', { speed: this.speed, loop: this.loop, discard })),
    );
    if (state) this.adoptSession(state);
    if (state?.state === 'camera' && this.model) {
      const input = this.model.input;
      this.stopCamera();
      this.camera = await this.attempt('source', () =>
        startCamera({
          deviceId: this.cameraDeviceId,
          width: input.width,
          height: input.height,
          channels: input.channels,
          frameRateHz: this.source?.frameRateHz ?? 30,
          send: (packet) => this.api.sendFrame(packet),
        }),
      );
      // The source's provenance names the device as it captures (label and resolution).
      const capture = this.camera;
      if (capture !== null) await this.attempt('source', () => this.api.call('source.describeCamera', capture.device));
      // Device labels are only readable once the camera permission was granted.
      void this.refreshCameras();
    }
  }

  async pause(): Promise<void> {
    this.stopCamera();
    if (!this.running) return;
    const state = await this.attempt('stream', () => this.api.call('stream.stop', {}));
    if (state) this.adoptSession(state);
  }

  /** Speed and looping; a new speed applies at once while playing. */
  async setPlayback(change: { speed?: number; loop?: boolean }): Promise<void> {
    if (change.speed !== undefined) this.speed = change.speed;
    if (change.loop !== undefined) this.loop = change.loop;
    const state = await this.attempt('stream', () => this.api.call('stream.playback', change));
    if (state) this.adoptSession(state);
  }

  /** The whole source through the model at full speed; progress in `work`, cancellable. */
  async runOffline(): Promise<void> {
    this.offlineResult = null;
    const controller = new AbortController();
    this.offlineRun = controller;
    this.work = {
      requestId: null,
      task: 'offline run',
      done: 0,
      total: this.source?.frameCount ?? null,
      finished: false,
    };
    try {
      const result = await this.discarding((discard) =>
        this.api.call('stream.runOffline', { discard }, { signal: controller.signal }),
      );
      this.errors.source = null;
      if (result) {
        this.offlineResult = result;
        if (result.error) this.errors.source = result.error.message;
      }
    } catch (error) {
      // A cancelled run keeps what it computed: the session event brings that recording.
      this.errors.source = error instanceof KnobError && error.code === 'CANCELLED' ? null : errorText(error);
    } finally {
      this.offlineRun = null;
      this.work = null;
    }
  }

  cancelWork(): void {
    this.offlineRun?.abort();
  }

  /** Moves the source position; the recording is kept. */
  async seek(frame: number): Promise<void> {
    const state = await this.attempt('stream', () => this.api.call('stream.seek', { frame }));
    if (state) this.adoptSession(state);
  }

  async rewind(): Promise<void> {
    const state = await this.attempt('stream', () => this.api.call('stream.rewind', {}));
    if (state) this.adoptSession(state);
  }

  /** A new, empty recording (asks first when the current one has unsaved work). */
  async newRecording(): Promise<void> {
    this.stopCamera();
    const state = await this.attempt('stream', () =>
      this.discarding((discard) => this.api.call('recording.reset', { discard })),
    );
    if (state) this.adoptSession(state);
  }

  private scrubTarget: number | null = null;
  private scrubbing = false;

  /** Shows a recorded frame replayed at the current knobs (latest request wins while one is in flight). */
  async scrub(frame: number): Promise<void> {
    this.scrubTarget = frame;
    if (this.scrubbing) return;
    this.scrubbing = true;
    while (this.scrubTarget !== null) {
      const target = this.scrubTarget;
      this.scrubTarget = null;
      const result = await this.attempt('stream', () => this.api.call('trace.frame', { frame: target }));
      if (result && !this.running) this.scrubbed = result;
    }
    this.scrubbing = false;
  }

  async refreshCameras(): Promise<void> {
    const cameras = await this.attempt('source', () => listCameras());
    if (cameras) this.cameras = cameras;
  }

  async resetGate(): Promise<void> {
    await this.attempt('stream', () => this.api.call('stream.resetGate', {}));
  }

  /**
   * Why the calibration on screen no longer describes what it says (null when it does): other
   * knobs than it was computed at, or frames recorded since.
   */
  get metricsStale(): string | null {
    const m = this.metrics;
    if (m === null) return null;
    if (m.recordingId !== this.recordingId) return 'computed on another recording';
    if (m.groupBy !== this.metricsGroupBy) return `grouped by ${m.groupBy}, ${this.metricsGroupBy} is asked for`;
    if (m.settingsVersion !== this.version)
      return `computed at settings v${m.settingsVersion}, the knobs are at v${this.version}`;
    const recorded = this.framesProcessed;
    if (this.metricsWindow === null && m.frameCount !== recorded)
      return `computed on ${m.frameCount} frames, ${recorded} are recorded`;
    if (this.metricsLabelsRevision !== this.labelsRevision) return 'labels changed since';
    return null;
  }

  /** Counts label steps (corrections, undo, import, the metrics' choice), so metrics know when labels moved. */
  labelsRevision = $state(0);
  private metricsLabelsRevision = $state(0);

  /** Why the A/B result on screen is out of date: slots changed or frames recorded since. */
  get compareStale(): string | null {
    const c = this.compareResult;
    if (c === null) return null;
    if (c.a.recordingId !== this.recordingId) return 'computed on another recording';
    if (this.comparedSlots !== this.slotsRevision) return 'A or B changed since';
    if (this.metricsWindow === null && c.a.frameCount !== this.framesProcessed)
      return `computed on ${c.a.frameCount} frames, ${this.framesProcessed} are recorded`;
    return null;
  }

  /**
   * Recomputes a stale calibration or A/B view while paused (replay is fast, no model call); while
   * the stream plays, the views say they are stale and the 3 s light refresh follows.
   */
  async refreshStale(): Promise<void> {
    if (this.running) return;
    const missing = this.metrics === null && this.framesProcessed > 0;
    if ((missing || this.metricsStale !== null) && !this.busy.metrics) await this.refreshMetrics('full');
    if (this.compareStale !== null && this.slots.a !== null && this.slots.b !== null) await this.compare();
  }

  /** 'light' (no resampling) keeps refreshes during playback cheap; the Recompute button asks for 'full'. */
  async refreshMetrics(detail: 'full' | 'light' = 'full'): Promise<void> {
    // One computation at a time; a request made meanwhile (new options) runs right after it.
    if (this.busy.metrics) {
      this.refreshQueued = detail === 'full' || this.refreshQueued === 'full' ? 'full' : 'light';
      return;
    }
    this.busy.metrics = true;
    const labelsRevision = this.labelsRevision;
    const snapshot = await this.attempt('metrics', () =>
      this.api.call('metrics.snapshot', {
        lastFrames: this.metricsWindow ?? undefined,
        groupBy: this.metricsGroupBy,
        detail,
      }),
    );
    this.busy.metrics = false;
    if (snapshot && snapshot.recordingId === this.recordingId) {
      this.metrics = snapshot;
      this.metricsLabelsRevision = labelsRevision;
    }
    const queued = this.refreshQueued;
    this.refreshQueued = null;
    if (queued !== null) await this.refreshMetrics(queued);
  }

  private refreshQueued: 'full' | 'light' | null = null;

  /** A/B: remember the current knobs as slot A or B; compare replays the recorded trace with both. */
  takeSlot(slot: 'a' | 'b'): void {
    this.slots[slot] = { ...this.gate };
    this.slotsRevision++;
  }

  /** Counts slot changes, so an A/B result knows whether it still shows A and B as set. */
  slotsRevision = $state(0);
  private comparedSlots = $state(-1);

  async compare(): Promise<void> {
    const { a, b } = this.slots;
    if (a === null || b === null) {
      this.errors.compare = 'set both A and B from the knobs first';
      return;
    }
    const revision = this.slotsRevision;
    const result = await this.attempt('compare', () =>
      this.api.call('metrics.compare', { a, b, lastFrames: this.metricsWindow ?? undefined }),
    );
    if (result && result.a.recordingId === this.recordingId) {
      this.compareResult = result;
      this.comparedSlots = revision;
    }
  }

  /**
   * A label step's result: the recording's new summary, and the frame on screen shows the label the
   * metrics now read; the views recompute (a paused desk) or follow the stream.
   */
  private adoptLabels(recording: RecordingSummary, edit: LabelEdit | null): void {
    const session = this.session;
    if (session?.recording == null || recording.id !== session.recording.id) return;
    this.session = { ...session, recording };
    this.labelsRevision++;
    if (edit !== null) {
      if (this.scrubbed?.frame === edit.frame) this.scrubbed = { ...this.scrubbed, label: edit.label };
      if (this.update?.frame === edit.frame) this.update = { ...this.update, label: edit.label };
    }
  }

  /**
   * Opens a file or folder by its kind (file-kinds.ts), as the desk's own controls would: a
   * model, a bundle or settings file (imported), a trace, a video, a dataset or a folder of images.
   * How the desktop shell opens what the operator drops on the window, passes to the app or picks
   * in its menus.
   */
  async openPath(path: string): Promise<void> {
    switch (fileKindOf(path)) {
      case 'model':
        return this.loadModel({ path });
      case 'bundle':
        return this.importFrom(path);
      case 'trace':
        return this.openTrace(path);
      case 'video':
        return this.openSource({ kind: 'video', path });
      case 'dataset':
        return this.openSource({ kind: 'dataset', path });
      case 'folder':
        return this.openFolder(path);
    }
  }

  /** A folder: of images (an ImageFolder, a CSV manifest's) or, failing that, a NumPy dataset folder. */
  private async openFolder(path: string): Promise<void> {
    await this.openSource({ kind: 'folder', path });
    const asImages = this.errors.source;
    if (asImages === null) return;
    await this.openSource({ kind: 'dataset', path });
    if (this.errors.source !== null) this.errors.source = asImages;
  }

  /** A recorded trace as the current recording (asking before one would be discarded). */
  async openTrace(path: string): Promise<void> {
    this.busy.source = true;
    const trace = await this.attempt('source', () =>
      this.discarding((discard) => this.api.call('trace.load', { path, discard })),
    );
    this.busy.source = false;
    if (trace) this.resetView();
  }

  /** Does what the desktop shell asks (its menus, files opened with the app, a recovered crash). */
  async runShellCommand(command: ShellCommand): Promise<void> {
    switch (command.command) {
      case 'open':
        return this.openPath(command.path);
      case 'export-bundle':
        return this.exportTo(command.path);
      case 'open-run':
        return this.openRun(command.id);
      case 'notice':
        this.notice = command.message;
    }
  }

  async exportTo(path: string): Promise<void> {
    const result = await this.attempt('export', () => this.api.call('bundle.export', { path }));
    if (result) this.exported = result;
  }

  async importFrom(path: string): Promise<void> {
    const result = await this.attempt('export', () => this.api.call('bundle.import', { path }));
    if (result) {
      this.applyKnobs(result.knobs);
      this.gate = result.knobs.gate;
      this.saveSettings();
      this.imported = result.verification;
      this.importedModel = result.model === null ? null : { ...result.model, bundlePath: path };
    }
  }

  /** The imported bundle's model: from the bundle, or from a file the user located (checked by hash). */
  async loadBundleModel(modelPath?: string): Promise<void> {
    const bundle = this.importedModel;
    if (bundle === null) return;
    this.busy.model = true;
    const model = await this.attempt('export', () =>
      this.choosingCalibrator((calibrator) =>
        this.discarding((discard) =>
          this.api.call('bundle.loadModel', {
            path: bundle.bundlePath,
            ...(modelPath === undefined ? {} : { modelPath }),
            discard,
            calibrator,
          }),
        ),
      ),
    );
    this.busy.model = false;
    if (model) {
      this.resetView();
      this.importedModel = { ...bundle, matchesLoaded: true };
    }
  }

  /** A rejected frame's error is on screen: the next frame that gets through clears it (its cause is gone). */
  private frameErrorShown = false;

  private onUpdate(u: ApiEventData<'stream.update'>): void {
    const session = this.session;
    if (session?.recording == null || u.recordingId !== session.recording.id) return;
    this.update = u;
    if (this.frameErrorShown) {
      this.frameErrorShown = false;
      this.errors.stream = null;
    }
    this.session = {
      ...session,
      recording: { ...session.recording, frameCount: u.framesProcessed, framesDropped: u.framesDropped, unsaved: true },
    };
    this.pushHistory(u.timestampSeconds, u.g, u.uRef, u.severity, u.rolling);
  }

  /** A label changed: the counts and the rolling figures with it, at once (paused too). */
  private onRecordingChanged(change: ApiEventData<'recording.changed'>): void {
    const session = this.session;
    if (session?.recording == null || change.recording.id !== session.recording.id) return;
    this.session = { ...session, recording: change.recording };
    if (this.history.amendNewest(rollingColumns(change.rolling))) this.historyRevision++;
  }

  private pushHistory(t: number, g: number, u: number, severity: number, rolling: Rolling): void {
    this.history.push({ t, g, u, severity, ...rollingColumns(rolling) });
    this.historyRevision++;
  }

  // Knobs: latest wins; while one knobs.set is in flight, further changes merge and follow it.
  private applyKnobs(next: {
    gate: GateSettings;
    calibrator: CalibratorSpec | null;
    calibratorModel: string[] | null;
    version: number;
  }): void {
    if (next.version < this.version) return;
    const changed = next.version !== this.version;
    this.version = next.version;
    this.calibrator = next.calibrator;
    this.calibratorModel = next.calibratorModel;
    // Paused, the charts and the frame on screen follow the knobs and the calibrator: replayed at them (fast).
    if (changed && this.session?.recording != null && !this.running) {
      void this.replayed.loadSeries();
      void this.replayed.refreshShownFrame();
    }
    if (!this.inFlight && this.pending === null) this.gate = next.gate;
  }

  changeKnobs(patch: Partial<GateSettings>): void {
    this.gate = { ...this.gate, ...patch };
    this.pending = { ...(this.pending ?? {}), ...patch };
    this.saveSettings();
    void this.flushKnobs();
  }

  private async flushKnobs(): Promise<void> {
    if (this.inFlight || this.pending === null) return;
    const change = this.pending;
    this.pending = null;
    this.inFlight = true;
    try {
      const result = await this.api.call('knobs.set', { gate: change });
      this.errors.knobs = null;
      this.inFlight = false;
      this.applyKnobs(result);
    } catch (error) {
      this.inFlight = false;
      this.errors.knobs = errorText(error);
      const current = await this.api.call('knobs.get', {});
      this.applyKnobs(current);
      this.gate = current.gate;
    }
    void this.flushKnobs();
  }

  private saveSettings(): void {
    try {
      localStorage.setItem(SETTINGS_KEY, JSON.stringify(this.gate));
    } catch {
      // Storage may be unavailable (private mode); persistence is a convenience, not a requirement.
    }
  }

  private restoreSettings(): Partial<GateSettings> | null {
    try {
      const raw = localStorage.getItem(SETTINGS_KEY);
      return raw ? (JSON.parse(raw) as Partial<GateSettings>) : null;
    } catch {
      return null;
    }
  }
}
