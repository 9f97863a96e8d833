import type { Worker } from 'node:worker_threads';
import type { CancelSignal } from '../../../src-shared/cancel-signal';
import { cancelledError, KnobError, type KnobErrorPayload } from '../../../src-shared/errors';

/** What a request worker answers each message with, in order. */
export type WorkerReply = { ok: true; value: unknown } | { ok: false; error: KnobErrorPayload };

/**
 * A worker thread that answers each request in order with a WorkerReply (the tuning pool's threads,
 * the analysis thread). A thread that fails, exits or sends an unreadable reply fails every request
 * waiting on it, and every later one, with an error that says which thread (`what`).
 *
 * A request whose signal aborts ends the thread at once (a synchronous computation cannot be
 * interrupted any other way): the request and every other one waiting on the thread answer
 * CANCELLED, and the thread's CPU is released (issue 26: abandoned work stops).
 */
export class RequestThread<Request> {
  private readonly waiting: Array<(reply: WorkerReply) => void> = [];
  private failure: KnobError | null = null;

  constructor(
    readonly worker: Worker,
    private readonly what: string,
  ) {
    worker.on('message', (reply: WorkerReply) => this.waiting.shift()?.(reply));
    const fail = (error: KnobError) => {
      // a cancelled thread's exit is its cancellation, not a failure
      if (this.failure === null) this.failure = error;
      for (const resolve of this.waiting.splice(0)) resolve({ ok: false, error: this.failure.toPayload() });
    };
    worker.on('error', (error) => fail(new KnobError('INTERNAL', `${what} failed: ${error.message}`)));
    worker.on('messageerror', (error) =>
      fail(new KnobError('INTERNAL', `${what}'s reply could not be read: ${error.message}`)),
    );
    worker.on('exit', (code) => fail(new KnobError('INTERNAL', `${what} exited (code ${code})`)));
  }

  async send(request: Request, signal?: CancelSignal): Promise<unknown> {
    if (signal?.aborted) throw cancelledError(this.what);
    if (this.failure !== null) throw this.failure;
    const abort = () => this.cancel();
    signal?.addEventListener('abort', abort, { once: true });
    try {
      const reply = await new Promise<WorkerReply>((resolve) => {
        this.waiting.push(resolve);
        this.worker.postMessage(request);
      });
      if (!reply.ok) throw new KnobError(reply.error.code, reply.error.message);
      return reply.value;
    } finally {
      signal?.removeEventListener('abort', abort);
    }
  }

  /** Ends the thread: whatever waits on it answers CANCELLED. */
  cancel(): void {
    if (this.failure === null) this.failure = cancelledError(this.what);
    for (const resolve of this.waiting.splice(0)) resolve({ ok: false, error: this.failure.toPayload() });
    void this.worker.terminate();
  }
}
