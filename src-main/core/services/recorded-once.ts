import { untilCancelled } from '../../../src-shared/cancel-signal';

/**
 * One recording kept per kind of probe (the latest key's). A call asking for the key being
 * recorded waits for that recording; each waiter can cancel its own wait, and the recording itself
 * stops only when every waiter has cancelled.
 */
export class RecordedOnce<T> {
  private kept: { key: string; value: T } | null = null;
  private pending: { key: string; done: Promise<T>; controller: AbortController; waiters: number } | null = null;

  constructor(private readonly what: string) {}

  /** A recording is under way (the model is busy with it). */
  get recording(): boolean {
    return this.pending !== null;
  }

  /** The recording for `key`, and whether this call waited for it to be made (`fresh`). */
  async get(
    key: string,
    signal: AbortSignal,
    record: (signal: AbortSignal) => Promise<T>,
  ): Promise<{ recorded: T; fresh: boolean }> {
    if (this.kept?.key === key) return { recorded: this.kept.value, fresh: false };
    if (this.pending?.key !== key) {
      const controller = new AbortController();
      const done = record(controller.signal);
      const pending = { key, done, controller, waiters: 0 };
      this.pending = pending;
      done.then(
        (value) => {
          if (this.pending === pending) [this.kept, this.pending] = [{ key, value }, null];
        },
        () => {
          if (this.pending === pending) this.pending = null;
        },
      );
    }
    const pending = this.pending!;
    pending.waiters++;
    try {
      return { recorded: await untilCancelled(pending.done, signal, `the ${this.what} was cancelled`), fresh: true };
    } finally {
      pending.waiters--;
      if (pending.waiters === 0 && signal.aborted) pending.controller.abort();
    }
  }
}
