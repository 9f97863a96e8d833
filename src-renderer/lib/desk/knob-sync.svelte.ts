import type { KnobApi } from '../../../src-shared/api/client';
import type { Knobs } from '../../../src-shared/api/contract';
import type { ModelDescription } from '../../../src-shared/api/model-options';
import type { CalibratorSpec } from '../../../src-shared/calibrators';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../../src-shared/gate/gate-settings';
import type { ErrorSlots } from './error-slots.svelte';
import { LatestWins } from './latest-wins';
import type { KnobStore } from './saved-knobs';

/**
 * The knobs as the operator turns them and as the backend holds them. A turn shows at once (the
 * knob does not wait for the backend) and is sent with 'knobs.set', one call in flight, the turns
 * made meanwhile merged into the next (latest wins). The backend's version counts accepted changes;
 * an older version never overwrites a newer one, and the backend's gate replaces the knobs only
 * when no turn is on its way (else a knob would jump back under the operator's hand).
 */
export interface KnobSyncHost {
  api: KnobApi;
  slots: ErrorSlots;
  store: KnobStore;
  model(): ModelDescription | null;
  /** The backend accepted a change (a new version): a paused desk replays its views at it. */
  moved(): void;
}

export class KnobSync {
  gate = $state<GateSettings>({ ...DEFAULT_GATE_SETTINGS });
  version = $state(0);
  /** The output calibrator every view applies after fusion (null: none). */
  calibrator = $state.raw<CalibratorSpec | null>(null);
  /** The SHA-256 of the model the calibrator was fitted on (model binding: shown when it is not the loaded one). */
  calibratorModel = $state.raw<string[] | null>(null);

  private readonly sets: LatestWins<Partial<GateSettings>, Knobs>;

  constructor(private readonly host: KnobSyncHost) {
    this.sets = new LatestWins({
      run: (gate) => host.api.call('knobs.set', { gate }),
      merge: (pending, next) => ({ ...pending, ...next }),
      deliver: (knobs) => {
        host.slots.report('knobs', null);
        this.adopt(knobs);
      },
      fail: (error) => {
        host.slots.report('knobs', error);
        void this.resync();
      },
    });
  }

  /** The applied calibrator belongs to another model than the loaded one (kept by the operator's choice). */
  get calibratorOfAnotherModel(): boolean {
    const fitted = this.calibratorModel;
    const loaded = this.host.model()?.sha256 ?? null;
    return this.calibrator !== null && fitted !== null && loaded !== null && fitted.join('+') !== loaded.join('+');
  }

  /** The backend's knobs (an event, a call's result); an older version than the one held is ignored. */
  adopt(next: Knobs): void {
    if (next.version < this.version) return;
    const moved = next.version !== this.version;
    this.version = next.version;
    this.calibrator = next.calibrator;
    this.calibratorModel = next.calibratorModel;
    if (moved) this.host.moved();
    if (!this.sets.busy) this.gate = next.gate;
  }

  /** The operator turned knobs: shown and saved at once, sent latest-wins. */
  change(patch: Partial<GateSettings>): Promise<void> {
    this.gate = { ...this.gate, ...patch };
    this.host.store.save(this.gate);
    return this.sets.request(patch);
  }

  /** Knobs imported from a bundle: the backend already holds them, so they replace the knobs shown. */
  adoptImported(knobs: Knobs): void {
    this.adopt(knobs);
    this.gate = knobs.gate;
    this.host.store.save(this.gate);
  }

  /** The knobs saved by an earlier desk, sent to a fresh backend; false when none were saved. */
  restoreSaved(): boolean {
    const saved = this.host.store.restore();
    if (saved !== null) void this.change(saved);
    return saved !== null;
  }

  /** Applies a calibrator after fusion in every view (null switches it off). */
  async setCalibrator(spec: CalibratorSpec | null): Promise<void> {
    const knobs = await this.host.slots.attempt('calibrators', () =>
      this.host.api.call('calibrator.set', { calibrator: spec }),
    );
    if (knobs) this.adopt(knobs);
  }

  /** A refused change: the knobs go back to what the backend holds (the error stays on screen). */
  private async resync(): Promise<void> {
    try {
      const current = await this.host.api.call('knobs.get', {});
      this.adopt(current);
      this.gate = current.gate;
    } catch {
      // the connection's own error says why; the knobs show the operator's last turn meanwhile
    }
  }
}
