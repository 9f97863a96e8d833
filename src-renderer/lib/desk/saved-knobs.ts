import type { GateSettings } from '../../../src-shared/gate/gate-settings';

/**
 * Where the operator's knob settings outlive a reload of the desk: the browser's local storage.
 * Persistence is a convenience, not a requirement, so storage that is unavailable (private mode, a
 * test in Node) reads as nothing saved.
 */
export interface KnobStore {
  save(gate: GateSettings): void;
  restore(): Partial<GateSettings> | null;
}

const SETTINGS_KEY = 'knob-studio.settings.v1';

export const localKnobStore: KnobStore = {
  save(gate) {
    try {
      localStorage.setItem(SETTINGS_KEY, JSON.stringify(gate));
    } catch {
      // unavailable storage: nothing kept (see above)
    }
  },
  restore() {
    try {
      const raw = localStorage.getItem(SETTINGS_KEY);
      return raw ? (JSON.parse(raw) as Partial<GateSettings>) : null;
    } catch {
      return null;
    }
  },
};
