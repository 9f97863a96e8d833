import { parentPort, type Transferable } from 'node:worker_threads';
import type { CancelSignal } from '../../../src-shared/cancel-signal';
import { toErrorPayload } from '../../../src-shared/errors';
import type { FromWorker, ToWorker } from './worker-protocol';

/** The worker's line to its parent: a worker thread's parentPort, or a child process's channel. */
export interface ServePort {
  postMessage(message: FromWorker<unknown>, transfer?: readonly Transferable[]): void;
  onMessage(listener: (message: ToWorker<unknown>) => void): void;
}

export interface RequestContext {
  /**
   * Aborts when the parent cancels the request: work in chunks polls it between them. With a
   * shared cancel flag (worker-protocol.ts) `aborted` is true as soon as the parent sets it, even
   * while this thread is busy and reads no messages; its 'abort' event still waits for the message.
   */
  readonly signal: CancelSignal;
  /** Tells the parent how far the request has got (it reaches the caller's onProgress). */
  progress(done: number, total: number, stage: string): void;
}

export type RequestHandler<Request, Result> = (request: Request, context: RequestContext) => Result | Promise<Result>;

export interface ServeOptions {
  /** Default: this worker thread's parentPort. */
  port?: ServePort;
  /**
   * Start each request as it arrives instead of one at a time in arrival order (for a relay that
   * schedules the work itself, such as the inference process's main thread).
   */
  concurrent?: boolean;
  /** Buffers of a result that move to the parent instead of being copied (a thread's buffers handed back for reuse). */
  transferOf?: (result: unknown) => readonly Transferable[];
}

/** The signal, aborted also once the parent sets the request's shared flag (when it sent one). */
function withSharedFlag(signal: AbortSignal, flag: Int32Array | undefined): CancelSignal {
  if (!(flag instanceof Int32Array) || !(flag.buffer instanceof SharedArrayBuffer) || flag.length < 1) return signal;
  return {
    get aborted() {
      return signal.aborted || Atomics.load(flag, 0) !== 0;
    },
    addEventListener: (type, listener, options) => signal.addEventListener(type, listener, options),
    removeEventListener: (type, listener) => signal.removeEventListener(type, listener),
  };
}

function threadParentPort(): ServePort | null {
  const port = parentPort;
  if (port === null) return null;
  return {
    postMessage: (message, transfer) => port.postMessage(message, transfer),
    onMessage: (l) => port.on('message', l),
  };
}

/**
 * The worker's side of the protocol (worker-protocol.ts): answers every request under its id with
 * the handler's result or its error (as a KnobErrorPayload), and lets the handler report progress.
 * A cancelled request's signal aborts; one still waiting for its turn never runs, and a cancelled
 * request gets no answer (the parent has failed it already). Outside a worker (no parentPort and
 * no port given) it does nothing, so a module that serves can still be imported for its types.
 */
export function serve<Request, Result>(handler: RequestHandler<Request, Result>, options: ServeOptions = {}): void {
  const port = options.port ?? threadParentPort();
  if (port === null) return;
  const live = new Map<number, { controller: AbortController; signal: CancelSignal }>();
  const answer = async (id: number, request: Request): Promise<void> => {
    const { signal } = live.get(id)!;
    if (signal.aborted) return void live.delete(id);
    const context: RequestContext = {
      signal,
      progress: (done, total, stage) => {
        if (!signal.aborted) port.postMessage({ id, progress: { done, total, stage } });
      },
    };
    let reply: FromWorker<Result>;
    let transfer: readonly Transferable[] = [];
    try {
      const result = await handler(request, context);
      reply = { id, result };
      transfer = options.transferOf?.(result) ?? [];
    } catch (error) {
      reply = { id, error: toErrorPayload(error) };
    }
    live.delete(id);
    // the parent has failed a cancelled request: its answer would be copied only to be dropped
    if (signal.aborted) return;
    try {
      port.postMessage(reply, transfer);
    } catch (error) {
      port.postMessage({ id, error: toErrorPayload(error) });
    }
  };

  const queue: Array<{ id: number; request: Request }> = [];
  let running = false;
  const pump = async (): Promise<void> => {
    if (running) return;
    running = true;
    while (queue.length > 0) {
      // one turn of the event loop first, so cancels already sent reach `live` before it starts
      await new Promise((resolve) => setImmediate(resolve));
      const next = queue.shift()!;
      await answer(next.id, next.request);
    }
    running = false;
  };

  port.onMessage((message) => {
    if ('cancel' in message) return void live.get(message.cancel)?.controller.abort();
    // not the protocol's (no id to answer under): nothing can be said back
    if (typeof message.id !== 'number') return;
    const controller = new AbortController();
    live.set(message.id, { controller, signal: withSharedFlag(controller.signal, message.cancelFlag) });
    const request = message.request as Request;
    if (options.concurrent === true) void answer(message.id, request);
    else {
      queue.push({ id: message.id, request });
      void pump();
    }
  });
  port.postMessage({ ready: true });
}
