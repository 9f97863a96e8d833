import type { CallContext } from '../core/calls/call-context';
import { abortOnInterrupt } from './interrupt';
import { createProgress } from './progress';

/** A command's call context and what ends it. */
export interface CommandCall extends CallContext {
  /** Erases the progress bar and stops listening for Ctrl-C. */
  dispose(): void;
}

/**
 * The call context a command hands to a use case, as the desk's backend hands one per API call:
 * Ctrl-C cancels it (interrupt.ts), and its progress draws the bar on stderr (progress.ts; only on
 * a terminal, never with --json).
 */
export function commandCall(title: string, json: boolean): CommandCall {
  const interrupt = abortOnInterrupt();
  const progress = createProgress(title, !json);
  let disposed = false;
  return {
    signal: interrupt.signal,
    progress: (task, done, total) => progress.update(done, total, task),
    // once: a command that prints its result first disposes early, and again on its way out
    dispose() {
      if (disposed) return;
      disposed = true;
      progress.finish();
      interrupt.dispose();
    },
  };
}
