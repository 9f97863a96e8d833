import { DEFAULT_GATE_SETTINGS, parseGateSettings, type GateSettings } from '../../../src-shared/gate/gate-settings';
import { readSettingsFile, SETTINGS_FORMAT_VERSION } from '../recording/settings-file';
import {
  SourceOpenParamsSchema,
  type ApiEvent,
  type ApiEventData,
  type ApiMethod,
  type ApiParams,
  type ApiResult,
  type Knobs,
} from '../../../src-shared/api/contract';
import { KnobError } from '../../../src-shared/errors';
import { StreamEngine } from '../engine/stream-engine';
import { ModelOptionsSchema } from '../../../src-shared/api/model-options';

export type BackendEventListener = <E extends ApiEvent>(event: E, data: ApiEventData<E>) => void;

type Handler<M extends ApiMethod> = (params: ApiParams<M>) => Promise<ApiResult<M>> | ApiResult<M>;

/**
 * Why a method answers NOT_AVAILABLE in this build. Each entry is removed by the issue that lands
 * the capability; the renderer shows the reason next to the control that asked.
 */
const PENDING_METHODS: Partial<Record<ApiMethod, string>> = {};

/**
 * The backend's state and the one implementation of every API method. The Electron shell, the
 * WebSocket host and the CLI all drive this same object; none of them holds logic of its own.
 */
export class KnobBackend {
  private knobs: Knobs = { gate: DEFAULT_GATE_SETTINGS, version: 0 };
  private readonly listeners = new Set<BackendEventListener>();
  private readonly engine = new StreamEngine(
    (event, data) => this.emit(event, data),
    () => this.knobs,
  );
  private readonly handlers: { [M in ApiMethod]?: Handler<M> } = {
    'app.info': () => ({
      name: 'Knob Studio',
      version: '0.1.0',
      availableMethods: Object.keys(this.handlers).filter((m) => !(m in PENDING_METHODS)),
    }),
    'knobs.get': () => this.knobs,
    // Validate the merged setting as a whole: ranges and combinations, then apply atomically.
    'knobs.set': (params) => this.setGate(parseGateSettings({ ...this.knobs.gate, ...params.gate })),
    'model.load': (params) => this.engine.loadModel(ModelOptionsSchema.parse(params)),
    'model.info': () => this.engine.modelInfo(),
    'source.open': (params) => this.engine.openSource(SourceOpenParamsSchema.parse(params)),
    'stream.start': (params) => this.engine.start(params.speed, params.loop),
    'stream.seek': (params) => this.engine.seek(params.frame),
    'stream.runOffline': (params) => this.engine.runOfflineNow(params.maxFrames),
    'work.cancel': () => this.engine.cancelWork(),
    'trace.frame': (params) => this.engine.recordedFrame(params.frame),
    'stream.rewind': () => this.engine.rewind(),
    'stream.resetGate': () => this.engine.resetGate(),
    'stream.stop': () => this.engine.stop(),
    'trace.save': (params) => this.engine.saveTrace(params.path),
    'trace.load': (params) => this.engine.loadTrace(params.path),
    'metrics.snapshot': (params) =>
      this.engine.metricsSnapshot({ lastFrames: params.lastFrames, groupBy: params.groupBy, detail: params.detail }),
    'metrics.compare': (params) =>
      this.engine.compare(parseGateSettings(params.a), parseGateSettings(params.b), params.lastFrames),
    'stream.label': (params) => this.engine.label(params.frame, params.label),
    'bundle.export': (params) => this.engine.exportSettingsAndReport(params.path),
    'bundle.import': async (params) => {
      const file = await readSettingsFile(params.path);
      const current = this.engine.modelInfo()?.paths.join(' + ') ?? null;
      const modelNote =
        file.model === null
          ? 'no model recorded'
          : file.model === current
            ? 'same model as the one loaded'
            : `exported with ${file.model}, the loaded model is ${current ?? 'none'}`;
      return {
        knobs: this.setGate(file.gate),
        verification: `settings valid (knob-settings format ${SETTINGS_FORMAT_VERSION}); ${modelNote}`,
      };
    },
  };

  private setGate(gate: GateSettings): Knobs {
    this.knobs = { gate, version: this.knobs.version + 1 };
    this.engine.applyKnobs(this.knobs);
    this.emit('knobs.changed', this.knobs);
    return this.knobs;
  }

  /** A camera frame from the binary frame path (MessagePort or binary WebSocket message). */
  pushFrame(packet: Uint8Array): void {
    this.engine.pushFrame(packet);
  }

  /** Stops the stream and the inference process (window closed, host shut down). */
  async close(): Promise<void> {
    await this.engine.close();
  }

  subscribe(listener: BackendEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async handle<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiResult<M>> {
    const handler = this.handlers[method] as Handler<M> | undefined;
    if (handler === undefined) {
      throw new KnobError(
        'NOT_AVAILABLE',
        `${method} is not available in this build: ${PENDING_METHODS[method] ?? 'not implemented'}`,
      );
    }
    return handler(params);
  }

  private emit<E extends ApiEvent>(event: E, data: ApiEventData<E>): void {
    for (const listener of this.listeners) listener(event, data);
  }
}
