import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiParams, ApiResult } from '../../../src-shared/api/contract';
import type { ModelDescription } from '../../../src-shared/api/model-options';
import type { RecentRun } from '../../../src-shared/api/recent-runs';
import type { SessionState, SourceInfo } from '../../../src-shared/api/session-state';
import type { CalibrationMethod, HeldOutSplit } from '../../../src-shared/calibrators';
import { AbCompare } from './ab-compare.svelte';
import { Camera } from './camera.svelte';
import { Confirmations } from './confirmations.svelte';
import { ErrorSlots } from './error-slots.svelte';
import { FieldWatch } from './field-watch.svelte';
import { Files } from './files.svelte';
import { KnobModelMaker } from './knob-model-maker.svelte';
import { FIRST_START_SCHEDULE } from './first-start';
import { browserHardware, HardwareKnobs, type HardwareHost } from './hardware-knobs.svelte';
import { KnobSync } from './knob-sync.svelte';
import { Labelling } from './labelling.svelte';
import { MetricsView } from './metrics-view.svelte';
import { ModelAndSource, type Replaced } from './model-and-source.svelte';
import { OfflineRun } from './offline-run.svelte';
import { Probes } from './probes.svelte';
import { RecordingRequest } from './recording-request.svelte';
import { Runs } from './runs.svelte';
import { localBindingsStore } from './saved-bindings';
import { localKnobStore, type KnobStore } from './saved-knobs';
import { SessionMirror } from './session-mirror.svelte';
import { StreamView } from './stream-view.svelte';
import { Transport } from './transport.svelte';
import { Tuning } from './tuning.svelte';

/**
 * The desk's state, shared by its panels: a thin composition of small state modules, one per
 * concern (this folder), wired here. Every call goes through the typed API; nothing here computes
 * a number the desk shows (they come from src-shared, in the backend or in a component's
 * $derived). Views computed from a recording say what they were computed for and are stale by one
 * rule (staleness.ts); when another recording becomes current they are cleared. Anything that
 * would discard a recording with unsaved work asks the operator first (confirmations.svelte.ts).
 */
export { errorText } from './error-text';

export class Desk {
  readonly slots = new ErrorSlots();
  readonly confirmations = new Confirmations();
  readonly mirror: SessionMirror;
  readonly knobs: KnobSync;
  readonly stream: StreamView;
  readonly camera: Camera;
  readonly transport: Transport;
  readonly offline: OfflineRun;
  readonly loading: ModelAndSource;
  readonly metrics: MetricsView;
  readonly ab: AbCompare;
  /** Calibrators fitted on the recording's fused output and compared on held-out frames. */
  readonly calibratorComparison: RecordingRequest<ApiResult<'calibrator.compare'>>;
  /** Split-conformal prediction sets of the output at the knobs and calibrator now. */
  readonly predictionSets: RecordingRequest<ApiResult<'conformal.sets'>>;
  /** The paper's analyses of the current recording (Analyses tab). */
  readonly analyses: RecordingRequest<ApiResult<'analysis.run'>>;
  readonly probes: Probes;
  /** The Field tab: drift alarms, calibration over time, label-free estimates, the review queue. */
  readonly field: FieldWatch;
  /** The Tune tab: the last tune of the current recording, Apply inside the knobs' ranges, Undo. */
  readonly tuning: Tuning;
  /** Labelling mode, corrections with undo, the metrics' choice of labels, label files. */
  readonly labelling: Labelling;
  readonly runs: Runs;
  readonly files: Files;
  readonly knobModels: KnobModelMaker;
  /** MIDI controllers and gamepads bound to the knobs and the transport. */
  readonly hardware: HardwareKnobs;
  /** Something the desktop shell told the operator (a window reloaded after a crash); null when none. */
  notice = $state<string | null>(null);

  constructor(
    private readonly api: KnobApi,
    store: KnobStore = localKnobStore,
    devices: Pick<HardwareHost, 'store' | 'requestMidi' | 'gamepads' | 'frames' | 'watchPads'> = {
      store: localBindingsStore,
      ...browserHardware(),
    },
  ) {
    const { slots, confirmations } = this;
    const mirror = (this.mirror = new SessionMirror({
      slots,
      recordingReplaced: (next) => this.recordingReplaced(next),
    }));
    const version = (): number => this.knobs.version;
    const recordingId = (): number | null => mirror.recordingId;
    this.knobs = new KnobSync({ api, slots, store, model: () => mirror.model, moved: () => this.knobsMoved() });
    this.stream = new StreamView({ api, slots, mirror });
    this.camera = new Camera({ api, slots });
    const stopCamera = (): void => this.camera.stop();
    this.transport = new Transport({ api, slots, confirmations, mirror, stream: this.stream, camera: this.camera });
    this.offline = new OfflineRun({ api, slots, confirmations, mirror });
    this.loading = new ModelAndSource({
      api,
      slots,
      confirmations,
      mirror,
      stopCamera,
      replaced: (what) => this.replaced(what),
    });
    this.metrics = new MetricsView({ api, slots, mirror, settingsVersion: version });
    this.ab = new AbCompare({
      api,
      slots,
      mirror,
      gate: () => this.knobs.gate,
      window: () => this.metrics.window,
      binning: () => this.metrics.binning,
    });
    const requestHost = (area: 'calibrators' | 'conformal' | 'analysis' | 'field') => ({
      recordingId,
      settingsVersion: version,
      labelsRevision: () => this.metrics.labelsRevision,
      report: (error: unknown) => slots.report(area, error),
    });
    this.calibratorComparison = new RecordingRequest(requestHost('calibrators'));
    this.predictionSets = new RecordingRequest(requestHost('conformal'));
    this.analyses = new RecordingRequest(requestHost('analysis'));
    this.field = new FieldWatch(api, slots, requestHost('field'));
    this.probes = new Probes({ api, slots, settingsVersion: version });
    this.tuning = new Tuning({
      api,
      recordingId,
      settingsVersion: version,
      gate: () => this.knobs.gate,
      changeKnobs: (patch) => void this.knobs.change(patch),
      track: (task, total, call) => this.offline.track(task, total, call),
    });
    this.labelling = new Labelling({
      api,
      shownFrame: () => this.stream.shown,
      classCount: () => mirror.model?.classCount ?? 0,
      layers: () => mirror.session?.recording?.labels ?? null,
      labelName: (classIndex) => mirror.model?.labelNames[classIndex] ?? String(classIndex),
      adopt: (recording, edit) => {
        if (!mirror.amendRecording(recording.id, () => recording)) return;
        this.metrics.labelsRevision++;
        if (edit !== null) this.stream.showLabel(edit);
      },
    });
    this.runs = new Runs({ api, slots, confirmations, mirror, stopCamera });
    this.files = new Files({
      api,
      slots,
      loading: this.loading,
      knobs: this.knobs,
      runs: this.runs,
      notify: (message) => (this.notice = message),
      track: (task, total, call) => this.offline.track(task, total, call),
    });
    this.knobModels = new KnobModelMaker({
      api,
      slots,
      loading: this.loading,
      track: (task, total, call) => this.offline.track(task, total, call),
    });
    this.hardware = new HardwareKnobs({
      ...devices,
      gate: () => this.knobs.gate,
      change: (patch) => void this.knobs.change(patch),
      playing: () => this.running,
      play: () => void this.transport.play(),
      pause: () => void this.transport.pause(),
    });
  }

  get errors(): ErrorSlots['errors'] {
    return this.slots.errors;
  }

  get session(): SessionState | null {
    return this.mirror.session;
  }

  get model(): ModelDescription | null {
    return this.mirror.model;
  }

  get source(): SourceInfo | null {
    return this.mirror.source;
  }

  get running(): boolean {
    return this.mirror.running;
  }

  get framesProcessed(): number {
    return this.mirror.framesProcessed;
  }

  /**
   * Start-up: subscribe, then take the session as the backend has it. A page reloaded on a running
   * backend finds its recording and position as they were. A fresh backend gets the saved knob
   * settings, then: when it keeps recent runs and has one, the last session comes back (its model,
   * its source and schedule, its recording, and the position it left off at; paused); otherwise
   * (the first start) the default model and the embedded stream under FIRST_START_SCHEDULE, playing.
   */
  async start(): Promise<() => void> {
    const { api, slots } = this;
    const offs = [
      api.on('knobs.changed', (k) => this.knobs.adopt(k)),
      api.on('session.state', (s) => this.mirror.adopt(s)),
      api.on('stream.update', (u) => {
        this.stream.received(u);
        this.field.received(u);
      }),
      api.on('recording.changed', (c) => this.stream.recordingChanged(c)),
      api.on('frame.rejected', (e) => this.stream.rejected(e.message)),
      api.on('work.progress', (p) => this.offline.progress(p)),
      api.on('runs.changed', (r) => this.runs.adopt(r)),
    ];
    const stop = (): void => {
      offs.forEach((off) => off());
      this.hardware.dispose();
    };
    const knobs = await slots.attempt('connection', () => api.call('knobs.get', {}));
    if (knobs) this.knobs.adopt(knobs);
    const session = await slots.attempt('connection', () => api.call('session.get', {}));
    if (session === null) return stop;
    this.mirror.adopt(session);
    this.transport.adoptPlayback(session);
    const runs = await this.runs.list();
    if (session.state !== 'no-model') return stop;
    this.knobs.restoreSaved();
    const last = runs?.runs[0] ?? null;
    if (last !== null && last.source !== null) await this.resumeRun(last);
    else {
      await this.loading.loadModel({ path: 'default' });
      if (this.model) await this.loading.openSource({ kind: 'embedded', schedule: FIRST_START_SCHEDULE });
      if (this.source) await this.transport.play();
    }
    return stop;
  }

  /**
   * Fits and compares calibrators on the Calibration panel's window, on the work bar (a step per
   * method, the backend naming each as it starts) where Cancel stops it between fits.
   */
  async compareCalibrators(
    methods: CalibrationMethod[],
    split: HeldOutSplit,
    /** The condition-aware calibrator's hysteresis over a stream, in frames (the backend's default otherwise). */
    conditionHysteresisFrames?: number,
  ): Promise<void> {
    const lastFrames = this.metrics.window ?? undefined;
    const frames = lastFrames === undefined ? 'all recorded frames' : `the last ${lastFrames} recorded frames`;
    const request = {
      methods,
      split,
      lastFrames,
      ...(conditionHysteresisFrames === undefined ? {} : { conditionHysteresisFrames }),
    };
    await this.calibratorComparison.run(() =>
      this.offline.track(`fitting calibrators on ${frames}`, methods.length, (signal) =>
        this.api.call('calibrator.compare', request, { signal }),
      ),
    );
  }

  /**
   * Split-conformal prediction sets on the Calibration panel's window, calibrated on its first
   * labelled frames, on the work bar (whose Cancel stops them).
   */
  async computePredictionSets(request: Omit<ApiParams<'conformal.sets'>, 'lastFrames'>): Promise<void> {
    const lastFrames = this.metrics.window ?? undefined;
    const frames = lastFrames === undefined ? 'all recorded frames' : `the last ${lastFrames} recorded frames`;
    await this.predictionSets.run(() =>
      this.offline.track(`prediction sets on ${frames}`, null, (signal) =>
        this.api.call('conformal.sets', { ...request, lastFrames }, { signal }),
      ),
    );
  }

  /** The paper's analyses of the recording, on the work bar, whose Cancel stops them. */
  async runAnalyses(): Promise<void> {
    await this.analyses.run(() =>
      this.offline.track('analysing the recording', null, (signal) => this.api.call('analysis.run', {}, { signal })),
    );
  }

  /** A calibration or A/B view no longer matches the knobs or the recording while paused, or none is there yet. */
  get wantsRecompute(): boolean {
    if (this.running) return false;
    const { metrics } = this;
    // a failed computation is not retried by itself (its error is shown; Recompute retries)
    const incomplete = (metrics.missing || metrics.lacksResampling) && this.errors.metrics === null;
    return incomplete || metrics.stale !== null || this.ab.stale !== null;
  }

  /**
   * Recomputes a stale calibration or A/B view while paused (replay is fast, no model call): the
   * figures first ('light': no resampling), then their intervals ('full'), so a knob turn on a long
   * recording updates the numbers before the bootstrap; intervals still being resampled for a
   * setting the knobs have left are stopped first (MetricsView.interruptIntervals). While the
   * stream plays, the views say they are stale and the 3 s light refresh follows.
   */
  async refreshStale(): Promise<void> {
    if (this.running) return;
    const { metrics, ab } = this;
    const stale = metrics.missing || metrics.stale !== null;
    if (stale && (!metrics.busy || metrics.interruptIntervals())) {
      await metrics.refresh('light');
      await metrics.refresh('full');
    } else if (!stale && metrics.lacksResampling && !metrics.busy) {
      // current figures from the last playback refresh: only their intervals are missing
      await metrics.refresh('full');
    }
    if (ab.stale !== null && ab.ready) await ab.compare();
  }

  /** The last session again: its knobs, its model (else the default), its source and schedule, its recording. */
  private async resumeRun(run: RecentRun): Promise<void> {
    void this.knobs.change(run.settings);
    const paths = run.model?.split(' + ') ?? [];
    if (paths.length > 0) await this.loading.loadModel({ path: paths[0], secondPath: paths[1] });
    if (this.model === null) await this.loading.loadModel({ path: 'default' });
    const source = run.source!;
    if (this.model)
      await this.loading.openSource({
        kind: source.kind,
        path: source.path ?? undefined,
        frameRateHz: source.frameRateHz,
        schedule: run.schedule ?? undefined,
        seed: run.seed,
      });
    await this.runs.open(run.id);
  }

  /** Another recording became current: the views of the old one go, and a complete one computes its own. */
  private recordingReplaced(next: SessionState): void {
    this.clearViews();
    const recording = next.recording;
    if (recording === null || recording.origin === 'live') return;
    // A recording that arrives complete computes its calibration by itself (busy shown): an offline
    // run's (also when cancelled), a loaded trace's, a reopened recent run's; and its gate over time.
    if (recording.frameCount > 0) void this.metrics.refresh();
    void this.stream.replayed.loadSeries();
  }

  /** A model, a source or a trace replaced the recording; a model or source, the probes recorded through it. */
  private replaced(what: Replaced): void {
    this.clearViews();
    if (what === 'model') this.probes.drop('all');
    if (what === 'source') this.probes.drop('open-source');
  }

  /** Paused, the charts and the frame on screen follow the knobs and the calibrator: replayed at them (fast). */
  private knobsMoved(): void {
    if (this.mirror.session?.recording == null || this.running) return;
    void this.stream.replayed.loadSeries();
    void this.stream.replayed.refreshShownFrame();
  }

  private clearViews(): void {
    this.stream.clear();
    this.metrics.reset();
    this.ab.reset();
    this.calibratorComparison.reset();
    this.predictionSets.reset();
    this.analyses.reset();
    this.field.reset();
    this.tuning.reset();
    this.offline.reset();
  }
}
