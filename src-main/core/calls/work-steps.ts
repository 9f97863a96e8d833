import { stopIfCancelled, type CancelSignal } from '../../../src-shared/cancel-signal';
import type { CallContext } from './call-context';

/**
 * A use case's named steps for the work bar and the CLI's progress line (an export, an import):
 * each step is reported (its name, the steps done, the total), then the event loop gets a turn so
 * a cancel sent meanwhile can arrive, then the call's signal is read. A step's own work is
 * synchronous, so a cancel stops the use case at the next step boundary and nothing half-written
 * is left (the file is written by the last step, atomically).
 */
export interface WorkSteps {
  step(name: string): Promise<void>;
}

export interface WorkStepOptions {
  onProgress?: (stage: string, done: number, total: number) => void;
  signal?: CancelSignal;
}

export function workSteps(what: string, total: number, options: WorkStepOptions = {}): WorkSteps {
  let done = 0;
  return {
    async step(name: string): Promise<void> {
      options.onProgress?.(name, Math.min(done, total), total);
      done++;
      await new Promise<void>((resolve) => setImmediate(resolve));
      stopIfCancelled(options.signal, `${what} was cancelled`);
    },
  };
}

/** A call's progress and cancel as a use case's steps read them (none for no call). */
export function stepsOfCall(call: CallContext | undefined): WorkStepOptions {
  return call === undefined
    ? {}
    : { onProgress: (stage, done, total) => call.progress(stage, done, total), signal: call.signal };
}

/** Steps that report nothing and are never cancelled (a caller with no work bar). */
export const NO_STEPS: WorkSteps = { step: async () => undefined };
