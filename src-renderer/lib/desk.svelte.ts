import type { ApiEventData, ApiParams, ApiResult } from '../../src-shared/api/contract';
import type { KnobApi } from '../../src-shared/api/client';
import type { ModelDescription } from '../../src-shared/api/model-options';
import type { CorruptionScheduleInput } from '../../src-shared/corruptions/schedule';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../src-shared/gate/gate-settings';
import { listCameras, startCamera, type CameraCapture, type CameraDevice } from './camera-capture';
import { StreamHistory } from './stream-history';

/**
 * The desk's state, shared by its panels: what the backend said last (model, source, stream, live
 * update, metrics) and the operator's knob settings, with one error slot per area so a failure is
 * shown next to what caused it. Every call goes through the typed API; nothing here computes a
 * number the desk shows (they come from src-shared, in the backend or in a component's $derived).
 * Backend results are replaced whole, never mutated, so they are raw state (no deep proxies: a
 * live update arrives 30 times a second).
 */
export type SourceKind = ApiParams<'source.open'>['kind'];
type Area = 'model' | 'source' | 'stream' | 'knobs' | 'metrics' | 'connection' | 'compare' | 'feedback' | 'export';

const SETTINGS_KEY = 'knob-studio.settings.v1';

export class Desk {
  model = $state.raw<ModelDescription | null>(null);
  source = $state.raw<ApiResult<'source.open'> | null>(null);
  /** Counts successful source.open calls (a reopened source with a new schedule looks the same). */
  sourceGeneration = $state(0);
  stream = $state<ApiResult<'stream.stop'>>({
    running: false,
    position: 0,
    framesProcessed: 0,
    framesDropped: 0,
    error: null,
  });
  update = $state.raw<ApiEventData<'stream.update'> | null>(null);
  metrics = $state.raw<ApiResult<'metrics.snapshot'> | null>(null);
  gate = $state<GateSettings>({ ...DEFAULT_GATE_SETTINGS });
  version = $state(0);
  speed = $state(1);
  loop = $state(false);
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
    feedback: null,
    export: null,
  });
  busy = $state<Record<'model' | 'source' | 'metrics', boolean>>({ model: false, source: false, metrics: false });
  /** Bumped on every update so charts know to redraw (the history itself is not reactive). */
  historyRevision = $state(0);
  readonly history = new StreamHistory(1800);
  compareResult = $state.raw<ApiResult<'metrics.compare'> | null>(null);
  slots = $state<{ a: GateSettings | null; b: GateSettings | null }>({ a: null, b: null });
  feedback = $state<string | null>(null);
  exported = $state.raw<ApiResult<'bundle.export'> | null>(null);
  imported = $state<string | null>(null);
  /** The long task in progress (offline run), from 'work.progress'; null when none. */
  work = $state.raw<ApiEventData<'work.progress'> | null>(null);
  offlineResult = $state.raw<ApiResult<'stream.runOffline'> | null>(null);
  cameras = $state<CameraDevice[]>([]);
  cameraDeviceId = $state<string | null>(null);
  private camera: CameraCapture | null = null;

  private inFlight = false;
  private pending: Partial<GateSettings> | null = null;

  constructor(private readonly api: KnobApi) {}

  private async attempt<T>(area: Area, work: () => Promise<T>): Promise<T | null> {
    try {
      const result = await work();
      this.errors[area] = null;
      return result;
    } catch (error) {
      this.errors[area] = error instanceof Error ? error.message : String(error);
      return null;
    }
  }

  /** Start-up: subscribe, restore settings, load the default model and open the embedded stream. */
  async start(): Promise<() => void> {
    const offs = [
      this.api.on('knobs.changed', (k) => this.applyKnobs(k)),
      this.api.on('stream.state', (s) => {
        this.stream = s;
        this.errors.stream = s.error ? s.error.message : null;
      }),
      this.api.on('stream.update', (u) => this.onUpdate(u)),
      this.api.on('frame.rejected', (e) => (this.errors.stream = e.message)),
      this.api.on('work.progress', (p) => (this.work = p.finished ? null : p)),
    ];
    const knobs = await this.attempt('connection', () => this.api.call('knobs.get', {}));
    if (knobs) this.applyKnobs(knobs);
    const saved = this.restoreSettings();
    if (saved) this.changeKnobs(saved);
    await this.loadModel({ path: 'default' });
    if (this.model) await this.openSource({ kind: 'embedded' });
    return () => offs.forEach((off) => off());
  }

  async loadModel(params: ApiParams<'model.load'>): Promise<void> {
    this.busy.model = true;
    const model = await this.attempt('model', () => this.api.call('model.load', params));
    this.busy.model = false;
    if (model) {
      this.model = model;
      this.source = null;
      this.resetView();
    }
  }

  async openSource(params: {
    kind: SourceKind;
    path?: string;
    frameRateHz?: number;
    schedule?: CorruptionScheduleInput;
    seed?: number;
  }): Promise<void> {
    this.camera?.stop();
    this.camera = null;
    this.busy.source = true;
    const source = await this.attempt('source', () => this.api.call('source.open', params));
    this.busy.source = false;
    if (source) {
      this.source = source;
      this.sourceGeneration++;
      this.stream = { ...this.stream, running: false, position: 0, framesProcessed: 0, framesDropped: 0 };
      this.resetView();
    }
  }

  private resetView(): void {
    this.update = null;
    this.metrics = null;
    this.history.clear();
    this.historyRevision++;
  }

  async play(): Promise<void> {
    this.scrubbed = null;
    const state = await this.attempt('stream', () =>
      this.api.call('stream.start', { speed: this.speed, loop: this.loop }),
    );
    if (state) this.stream = state;
    if (state && this.source?.kind === 'camera' && this.model) {
      const input = this.model.input;
      this.camera?.stop();
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
      // Device labels are only readable once the camera permission was granted.
      void this.refreshCameras();
    }
  }

  async pause(): Promise<void> {
    this.camera?.stop();
    this.camera = null;
    const state = await this.attempt('stream', () => this.api.call('stream.stop', {}));
    if (state) this.stream = state;
  }

  /** The whole source through the model at full speed; progress in `work`, cancellable. */
  async runOffline(): Promise<void> {
    this.offlineResult = null;
    this.work = { task: 'offline run', done: 0, total: this.source?.frameCount ?? null, finished: false };
    const result = await this.attempt('source', () => this.api.call('stream.runOffline', {}));
    this.work = null;
    if (result) {
      this.offlineResult = result;
      this.resetView();
      if (result.error) this.errors.source = result.error.message;
      await this.refreshMetrics();
    }
  }

  async cancelWork(): Promise<void> {
    await this.attempt('source', () => this.api.call('work.cancel', {}));
  }

  async seek(frame: number): Promise<void> {
    const state = await this.attempt('stream', () => this.api.call('stream.seek', { frame }));
    if (state) this.stream = state;
    this.resetView();
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
      if (result && !this.stream.running) this.scrubbed = result;
    }
    this.scrubbing = false;
  }

  async refreshCameras(): Promise<void> {
    const cameras = await this.attempt('source', () => listCameras());
    if (cameras) this.cameras = cameras;
  }

  async rewind(): Promise<void> {
    const state = await this.attempt('stream', () => this.api.call('stream.rewind', {}));
    if (state) this.stream = state;
    this.resetView();
  }

  async resetGate(): Promise<void> {
    await this.attempt('stream', () => this.api.call('stream.resetGate', {}));
  }

  /** 'light' (no resampling) keeps refreshes during playback cheap; the Recompute button asks for 'full'. */
  async refreshMetrics(detail: 'full' | 'light' = 'full'): Promise<void> {
    if (this.busy.metrics) return;
    this.busy.metrics = true;
    const snapshot = await this.attempt('metrics', () =>
      this.api.call('metrics.snapshot', {
        lastFrames: this.metricsWindow ?? undefined,
        groupBy: this.metricsGroupBy,
        detail,
      }),
    );
    this.busy.metrics = false;
    if (snapshot) this.metrics = snapshot;
  }

  /** A/B: remember the current knobs as slot A or B; compare replays the recorded trace with both. */
  takeSlot(slot: 'a' | 'b'): void {
    this.slots[slot] = { ...this.gate };
  }

  async compare(): Promise<void> {
    const { a, b } = this.slots;
    if (a === null || b === null) {
      this.errors.compare = 'set both A and B from the knobs first';
      return;
    }
    const result = await this.attempt('compare', () =>
      this.api.call('metrics.compare', { a, b, lastFrames: this.metricsWindow ?? undefined }),
    );
    if (result) this.compareResult = result;
  }

  /** Operator feedback on the frame on screen: its true class (the predicted one for "right"). */
  async labelCurrent(kind: 'right' | 'class', classIndex?: number): Promise<void> {
    const u = this.scrubbed ?? this.update;
    if (u === null) return;
    const label = kind === 'right' ? u.top[0]?.classIndex : classIndex;
    if (label === undefined) return;
    const result = await this.attempt('feedback', () => this.api.call('stream.label', { frame: u.frame, label }));
    if (result)
      this.feedback = `frame ${result.frame} labelled ${this.model?.labelNames[label] ?? label} (${result.labelledFrames} labelled frames)`;
  }

  async exportTo(path: string): Promise<void> {
    const result = await this.attempt('export', () => this.api.call('bundle.export', { path, includeModel: false }));
    if (result) this.exported = result;
  }

  async importFrom(path: string): Promise<void> {
    const result = await this.attempt('export', () => this.api.call('bundle.import', { path }));
    if (result) {
      this.applyKnobs(result.knobs);
      this.gate = result.knobs.gate;
      this.saveSettings();
      this.imported = result.verification;
    }
  }

  private onUpdate(u: ApiEventData<'stream.update'>): void {
    this.update = u;
    this.stream = {
      ...this.stream,
      framesProcessed: u.framesProcessed,
      framesDropped: u.framesDropped,
      position: Math.max(this.stream.position, u.frame + 1),
    };
    const rolling = (name: string): number => u.rolling.find((m) => m.name === name)?.value ?? Number.NaN;
    this.history.push({
      t: u.timestampSeconds,
      g: u.g,
      u: u.uRef,
      severity: u.severity,
      rollingAccuracy: rolling('accuracy'),
      rollingConfidence: rolling('mean confidence'),
    });
    this.historyRevision++;
  }

  // Knobs: latest wins; while one knobs.set is in flight, further changes merge and follow it.
  private applyKnobs(next: { gate: GateSettings; version: number }): void {
    if (next.version < this.version) return;
    this.version = next.version;
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
      this.errors.knobs = error instanceof Error ? error.message : String(error);
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
