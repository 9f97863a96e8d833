import type { Worker } from 'node:worker_threads';
import { KnobError, type KnobErrorPayload } from '../../../src-shared/errors';

/** What a request worker answers each message with, in order. */
export type WorkerReply = { ok: true; value: unknown } | { ok: false; error: KnobErrorPayload };

/**
 * A worker thread that answers each request in order with a WorkerReply (the tuning pool's threads,
 * the analysis thread). A thread that fails, exits or sends an unreadable reply fails every request
 * waiting on it, and every later one, with an error that says which thread (`what`).
 */
export class RequestThread<Request> {
  private readonly waiting: Array<(reply: WorkerReply) => void> = [];
  private failure: KnobError | null = null;

  constructor(
    readonly worker: Worker,
    what: string,
  ) {
    worker.on('message', (reply: WorkerReply) => this.waiting.shift()?.(reply));
    const fail = (error: KnobError) => {
      this.failure = error;
      for (const resolve of this.waiting.splice(0))
        resolve({ ok: false, error: { code: error.code, message: error.message } });
    };
    worker.on('error', (error) => fail(new KnobError('INTERNAL', `${what} failed: ${error.message}`)));
    worker.on('messageerror', (error) =>
      fail(new KnobError('INTERNAL', `${what}'s reply could not be read: ${error.message}`)),
    );
    worker.on('exit', (code) => fail(new KnobError('INTERNAL', `${what} exited (code ${code})`)));
  }

  async send(request: Request): Promise<unknown> {
    if (this.failure !== null) throw this.failure;
    const reply = await new Promise<WorkerReply>((resolve) => {
      this.waiting.push(resolve);
      this.worker.postMessage(request);
    });
    if (!reply.ok) throw new KnobError(reply.error.code, reply.error.message);
    return reply.value;
  }
}
