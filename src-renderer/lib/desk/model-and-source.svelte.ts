import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiParams } from '../../../src-shared/api/contract';
import type { CorruptionScheduleInput } from '../../../src-shared/corruptions/schedule';
import type { Area, ErrorSlots } from './error-slots.svelte';
import type { Confirmations } from './confirmations.svelte';
import type { SessionMirror } from './session-mirror.svelte';
import type { SourceKind } from '../../../src-shared/api/session-state';

/**
 * What the desk loads: a model (by path, or the one an imported bundle names), a source (and a new
 * corruption schedule for it in place), a recorded trace. Each replaces the recording, so it may
 * first ask to discard unsaved work, and a model load may ask whether an output calibrator fitted
 * on another model stays (confirmations.svelte.ts). The owner is told what was replaced, to clear
 * the views of the old recording and the probes recorded through the old model or source.
 */
export type Replaced = 'model' | 'source' | 'trace';

export interface SourceRequest {
  kind: SourceKind;
  path?: string;
  frameRateHz?: number;
  schedule?: CorruptionScheduleInput;
  seed?: number;
  recordFeatures?: boolean;
  classMap?: string;
}

export interface ModelAndSourceHost {
  api: KnobApi;
  slots: ErrorSlots;
  confirmations: Confirmations;
  mirror: SessionMirror;
  stopCamera(): void;
  replaced(what: Replaced): void;
}

type ModelLoad = Omit<ApiParams<'model.load'>, 'discard' | 'calibrator'>;
type BundleModelLoad = Omit<ApiParams<'bundle.loadModel'>, 'discard' | 'calibrator'>;

export class ModelAndSource {
  busy = $state({ model: false, source: false });
  /** Counts source.open calls that succeeded (a reopened source with a new schedule looks the same). */
  sourceGeneration = $state(0);

  constructor(private readonly host: ModelAndSourceHost) {}

  /** Resolves to whether the model loaded. */
  loadModel(params: ModelLoad): Promise<boolean> {
    return this.load('model', (discard, calibrator) =>
      this.host.api.call('model.load', { ...params, discard, calibrator }),
    );
  }

  /** The model an imported bundle names, from the bundle or a file the user located (checked by hash). */
  loadBundleModel(params: BundleModelLoad): Promise<boolean> {
    return this.load('export', (discard, calibrator) =>
      this.host.api.call('bundle.loadModel', { ...params, discard, calibrator }),
    );
  }

  /** Resolves to whether the source opened. */
  async openSource(params: SourceRequest): Promise<boolean> {
    const { api, slots, confirmations } = this.host;
    this.host.stopCamera();
    this.busy.source = true;
    const source = await slots.attempt('source', () =>
      confirmations.discarding((discard) => api.call('source.open', { ...params, discard })),
    );
    this.busy.source = false;
    if (source === null) return false;
    this.sourceGeneration++;
    this.host.replaced('source');
    return true;
  }

  /**
   * A new corruption schedule (and seed) for the open source, in place: a playing stream uses it
   * from its next frame and the recording keeps going. A frame error it caused goes with it.
   */
  async configureSource(schedule: CorruptionScheduleInput, seed: number): Promise<boolean> {
    const { api, slots, mirror } = this.host;
    const state = await slots.attempt('source', () => api.call('source.configure', { schedule, seed }));
    if (state === null) return false;
    mirror.adopt(state);
    slots.report('stream', null);
    return true;
  }

  /** A recorded trace as the current recording (asking before one would be discarded). */
  async openTrace(path: string): Promise<void> {
    const { api, slots, confirmations } = this.host;
    this.busy.source = true;
    const trace = await slots.attempt('source', () =>
      confirmations.discarding((discard) => api.call('trace.load', { path, discard })),
    );
    this.busy.source = false;
    if (trace) this.host.replaced('trace');
  }

  private async load(
    area: Area,
    call: (discard: boolean, calibrator: 'keep' | 'drop' | undefined) => Promise<unknown>,
  ): Promise<boolean> {
    const { slots, confirmations } = this.host;
    this.busy.model = true;
    const model = await slots.attempt(area, () =>
      confirmations.choosingCalibrator((calibrator) =>
        confirmations.discarding((discard) => call(discard, calibrator)),
      ),
    );
    this.busy.model = false;
    if (model === null) return false;
    this.host.replaced('model');
    return true;
  }
}
