import type { KnobApi } from '../../../src-shared/api/client';
import type { ApiResult } from '../../../src-shared/api/contract';
import { KnobError } from '../../../src-shared/errors';
import { pathName } from '../path-name';
import type { ErrorSlots } from './error-slots.svelte';
import type { ModelAndSource } from './model-and-source.svelte';

export interface KnobModelMakerHost {
  api: KnobApi;
  slots: ErrorSlots;
  loading: ModelAndSource;
  /** The work bar (OfflineRun.track): the call shown with its progress, and its Cancel. */
  track<T>(task: string, total: number | null, call: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

/**
 * "Make a Knob model" (issue 31): the loaded classifier made a Knob model over a labelled dataset
 * ('model.makeKnob': its features recorded under the training corruptions, the heads fitted, the
 * model and its card written), on the work bar with its progress and Cancel; then the card, and the
 * new model loaded when the operator asks (loading replaces the recording, with the usual question).
 */
export class KnobModelMaker {
  busy = $state(false);
  made = $state.raw<ApiResult<'model.makeKnob'> | null>(null);
  /** The last make the operator cancelled (nothing was written), or null. */
  cancelled = $state<string | null>(null);

  constructor(private readonly host: KnobModelMakerHost) {}

  /** `options`: the fit's seed, and the classifier's feature tensor when not the final layer's input. */
  async make(dataPath: string, outPath: string, options: { seed?: number; featuresNode?: string } = {}): Promise<void> {
    const { api, slots } = this.host;
    this.busy = true;
    this.cancelled = null;
    this.made = null;
    const task = `making ${pathName(outPath)} from ${pathName(dataPath)}`;
    try {
      this.made = await this.host.track(task, null, (signal) =>
        api.call('model.makeKnob', { dataPath, outPath, ...options }, { signal }),
      );
      slots.report('makeModel', null);
    } catch (error) {
      const cancelled = error instanceof KnobError && error.code === 'CANCELLED';
      slots.report('makeModel', cancelled ? null : error);
      if (cancelled) this.cancelled = `${task} cancelled: nothing was written`;
    } finally {
      this.busy = false;
    }
  }

  /** Loads the model just made (a Knob-native model: its contract detected). */
  async load(): Promise<boolean> {
    const made = this.made;
    return made !== null && this.host.loading.loadModel({ path: made.path });
  }
}
