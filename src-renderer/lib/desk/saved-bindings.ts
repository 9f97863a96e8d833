import { BINDINGS_FILE_KIND, readBindingsFile, type Binding } from '../hardware/bindings';

/**
 * Where the hardware bindings outlive a reload: the app's settings in local storage, kept in the
 * exported file's own form and read back through its schema (a value another version or a hand
 * wrote that does not parse binds nothing). Unavailable storage reads as nothing saved, as the
 * knobs' does (saved-knobs.ts).
 */
export interface BindingsStore {
  save(bindings: readonly Binding[]): void;
  restore(): Binding[];
}

const BINDINGS_KEY = 'knob-studio.hardware-bindings.v1';

/** The exported file's text: the bindings and nothing else. */
export function bindingsFileText(bindings: readonly Binding[]): string {
  return `${JSON.stringify({ kind: BINDINGS_FILE_KIND, version: 1, bindings }, null, 2)}\n`;
}

export const localBindingsStore: BindingsStore = {
  save(bindings) {
    try {
      localStorage.setItem(BINDINGS_KEY, bindingsFileText(bindings));
    } catch {
      // unavailable storage: nothing kept
    }
  },
  restore() {
    try {
      const raw = localStorage.getItem(BINDINGS_KEY);
      return raw === null ? [] : readBindingsFile(raw, 'the saved bindings');
    } catch {
      return [];
    }
  },
};
