import type { ApiParams, ApiResult } from '../../../src-shared/api/contract';
import type { KnobApi } from '../../../src-shared/api/client';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { DESK_KNOB_RANGES, outsideKnobRanges } from '../../../src-shared/tuning/knob-ranges';
import { errorText } from './error-text';
import { RecordingRequest } from './recording-request.svelte';

/**
 * The Tune tab's state: the last tune of the current recording (recording-request.svelte.ts), its
 * error, and the knobs each applied point replaced (Undo). The request always asks the tuner to
 * stay inside the desk's knob ranges (DESK_KNOB_RANGES, the knobs' own travel), and a point outside
 * them is refused, never applied: a knob cannot show it.
 */
export interface TuningHost {
  api: KnobApi;
  recordingId(): number | null;
  settingsVersion(): number;
  gate(): GateSettings;
  changeKnobs(patch: Partial<GateSettings>): void;
  /** Puts a long call on the work bar, whose Cancel stops it (OfflineRun.track). */
  track<T>(task: string, total: number | null, call: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

export type TuneRequest = Omit<ApiParams<'tune.run'>, 'within'>;

export class Tuning {
  readonly tune: RecordingRequest<ApiResult<'tune.run'>>;
  error = $state<string | null>(null);
  /** The knobs each applied tuning point replaced, latest last: Undo restores them one by one. */
  knobsBeforeApply = $state.raw<GateSettings[]>([]);

  constructor(private readonly host: TuningHost) {
    this.tune = new RecordingRequest({
      recordingId: host.recordingId,
      settingsVersion: host.settingsVersion,
      report: (error) => (this.error = error === null ? null : errorText(error)),
    });
  }

  get result(): ApiResult<'tune.run'> | null {
    return this.tune.result;
  }

  get busy(): boolean {
    return this.tune.busy;
  }

  /**
   * Tunes the knobs on the current recording (replay only), on the work bar (the backend's progress
   * moves it; Cancel stops the tune); the knobs change only when a point is applied.
   */
  run(params: TuneRequest): Promise<void> {
    return this.tune.run(() =>
      this.host.track('tuning the knobs on the recording', null, (signal) =>
        this.host.api.call('tune.run', { ...params, within: DESK_KNOB_RANGES }, { signal }),
      ),
    );
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
    this.tune.reset();
  }
}
