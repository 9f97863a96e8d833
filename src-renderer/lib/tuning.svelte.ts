import type { ApiParams, ApiResult } from '../../src-shared/api/contract';
import type { KnobApi } from '../../src-shared/api/client';
import type { GateSettings } from '../../src-shared/gate/gate-settings';
import { DESK_KNOB_RANGES, outsideKnobRanges } from '../../src-shared/tuning/knob-ranges';
import { errorText } from './desk-errors';

/**
 * The Tune tab's state (moved out of desk.svelte.ts): the last tune of the current recording, its
 * error and busy flag, and the knobs each applied point replaced (Undo). The request always asks
 * the tuner to stay inside the desk's knob ranges (DESK_KNOB_RANGES, the knobs' own travel), and a
 * point outside them is refused, never applied: a knob cannot show it.
 */
export interface TuningHost {
  api: KnobApi;
  recordingId(): number | null;
  gate(): GateSettings;
  changeKnobs(patch: Partial<GateSettings>): void;
}

export type TuneRequest = Omit<ApiParams<'tune.run'>, 'within'>;

export class Tuning {
  result = $state.raw<ApiResult<'tune.run'> | null>(null);
  busy = $state(false);
  error = $state<string | null>(null);
  /** The knobs each applied tuning point replaced, latest last: Undo restores them one by one. */
  knobsBeforeApply = $state.raw<GateSettings[]>([]);

  constructor(private readonly host: TuningHost) {}

  /** Tunes the knobs on the current recording (replay only); the knobs change only when a point is applied. */
  async run(params: TuneRequest): Promise<void> {
    this.busy = true;
    try {
      const result = await this.host.api.call('tune.run', { ...params, within: DESK_KNOB_RANGES });
      this.error = null;
      if (result.recordingId === this.host.recordingId()) this.result = result;
    } catch (error) {
      this.error = errorText(error);
    } finally {
      this.busy = false;
    }
  }

  /** Sets the knobs to a tuned point, remembering the ones it replaces for Undo; refused outside the knobs' ranges. */
  apply(settings: GateSettings): boolean {
    const outside = outsideKnobRanges(settings);
    if (outside !== null) {
      this.error = `Not applied: ${outside}.`;
      return false;
    }
    this.error = null;
    this.knobsBeforeApply = [...this.knobsBeforeApply, { ...this.host.gate() }];
    this.host.changeKnobs(settings);
    return true;
  }

  /** Restores the knobs the last applied tuning point replaced. */
  undo(): void {
    const previous = this.knobsBeforeApply.at(-1);
    if (previous === undefined) return;
    this.knobsBeforeApply = this.knobsBeforeApply.slice(0, -1);
    this.host.changeKnobs(previous);
  }

  /** Another recording became current: its tune is gone (the Undo steps stay: they are knobs). */
  reset(): void {
    this.result = null;
  }
}
