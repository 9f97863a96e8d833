import type { KnobErrorPayload } from '../../../src-shared/errors';

/**
 * The one protocol between the app and every thread and process it starts (the metrics worker, the
 * analysis thread, the tuning threads, the metric suite's helper, the live drift watch's thread,
 * the inference process and its session threads). Every request carries an id; the worker answers
 * it with its result or its error, and may report progress on it first; the parent may cancel it
 * by id. The parent's side is worker-channel.ts, the worker's worker-serve.ts.
 */

/** How far a request has got: `done` of `total`, in the named stage. */
export interface WorkerProgress {
  done: number;
  total: number;
  stage: string;
}

/**
 * From the parent: a request under its id, or the cancellation of one. A thread's channel may send
 * a shared flag with the request (`cancelFlag`, one Int32 of a SharedArrayBuffer) that it sets on
 * cancel: a thread busy in synchronous work reads no message until it is done, but it can read the
 * flag between chunks (RequestContext.signal), so a cancel stops it without ending the thread.
 */
export type ToWorker<Request> = { id: number; request: Request; cancelFlag?: Int32Array } | { cancel: number };

/**
 * From the worker, about one request: its result, its error, or how far it has got; and once, first,
 * `ready`: its modules are loaded and it serves. A thread is ended only after that (or after it has
 * exited): Node can crash the whole process when a worker is terminated while it is still loading
 * its modules (nodejs/node#39036), which a cancel in the first tenth of a second used to do.
 */
export type FromWorker<Result> =
  | { id: number; result: Result }
  | { id: number; error: KnobErrorPayload }
  | { id: number; progress: WorkerProgress }
  | { ready: true };

/** Whether a message from a worker is its `ready` (the one message about no request). */
export function isReadyMessage(message: unknown): message is { ready: true } {
  return typeof message === 'object' && message !== null && (message as { ready?: unknown }).ready === true;
}
