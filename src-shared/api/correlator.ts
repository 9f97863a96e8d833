import type { CancelSignal } from '../cancel-signal';
import { cancelledError, KnobError } from '../errors';

/**
 * Request/response correlation for every message channel of the app: the renderer's API calls and
 * every thread and process the backend starts (the worker protocol's channel,
 * src-main/core/workers/worker-channel.ts). Each call gets an id; the reply with that id
 * settles it; a call whose AbortSignal fires is rejected with CANCELLED at once and `onCancel`
 * tells the other side (which may still answer: a late reply for a settled id is ignored). When the
 * channel dies, `failAll` rejects everything still pending.
 */
export class Correlator<T> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: T) => void; reject: (error: Error) => void }>();

  /** Calls in flight. */
  get size(): number {
    return this.pending.size;
  }

  /**
   * Starts a call: `send(id)` must hand the request to the channel (it may throw, which rejects the
   * call). Resolves with the reply settled under that id.
   */
  call(
    send: (id: number) => void,
    options: { signal?: CancelSignal; what?: string; onCancel?: (id: number) => void } = {},
  ): Promise<T> {
    const { signal } = options;
    const what = options.what ?? 'the call';
    if (signal?.aborted) return Promise.reject(cancelledError(what));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const abort = (): void => {
        if (!this.pending.delete(id)) return;
        reject(cancelledError(what));
        options.onCancel?.(id);
      };
      const settle = (): void => signal?.removeEventListener('abort', abort);
      this.pending.set(id, {
        resolve: (value) => {
          settle();
          resolve(value);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      signal?.addEventListener('abort', abort, { once: true });
      try {
        send(id);
      } catch (error) {
        this.pending.delete(id);
        settle();
        reject(error instanceof Error ? error : new KnobError('INTERNAL', String(error)));
      }
    });
  }

  /** Settles a call with its reply; false when no call is waiting under that id. */
  resolve(id: number, value: T): boolean {
    const call = this.take(id);
    call?.resolve(value);
    return call !== undefined;
  }

  reject(id: number, error: Error): boolean {
    const call = this.take(id);
    call?.reject(error);
    return call !== undefined;
  }

  private take(id: number): { resolve: (value: T) => void; reject: (error: Error) => void } | undefined {
    const call = this.pending.get(id);
    this.pending.delete(id);
    return call;
  }

  /** The channel is gone: every pending call fails with `error`. */
  failAll(error: Error): void {
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const call of calls) call.reject(error);
  }
}
