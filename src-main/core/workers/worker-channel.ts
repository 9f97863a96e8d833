import type { Transferable, Worker } from 'node:worker_threads';
import { Correlator } from '../../../src-shared/api/correlator';
import type { CancelSignal } from '../../../src-shared/cancel-signal';
import { cancelledError, KnobError } from '../../../src-shared/errors';
import { isReadyMessage, type FromWorker, type ToWorker, type WorkerProgress } from './worker-protocol';

/** Where requests go: a worker_threads Worker, or an adapter over a child process's channel. */
export interface RequestPort<Request> {
  postMessage(message: ToWorker<Request>, transfer?: readonly Transferable[]): void;
}

export interface CallOptions {
  signal?: CancelSignal;
  /** What the call is, for its CANCELLED error (default: the worker's name). */
  what?: string;
  onProgress?: (progress: WorkerProgress) => void;
  /** Buffers that move to the worker with the request instead of being copied. */
  transfer?: readonly Transferable[];
  /** After a cancelled call has been failed and the worker told. */
  onCancel?: () => void;
}

/**
 * The parent's side of the worker protocol (worker-protocol.ts) over one port: each call gets an
 * id (the Correlator), its reply settles it whatever the order, its progress goes to its own
 * `onProgress`. A call whose signal aborts fails at once with CANCELLED and the worker is told by
 * id (a reply that still comes is dropped and counted in `dropped`), or, for a worker whose work
 * cannot be interrupted, `endOnCancel` ends it: then every call on it answers CANCELLED and its
 * CPU is released at once. Whoever owns the port calls `receive` with its messages and `end` when
 * it dies: every pending call, and every later one, fails with that error, which names the worker.
 */
export class WorkerChannel<Request, Result> {
  private readonly calls = new Correlator<Result>();
  private readonly progress = new Map<number, (progress: WorkerProgress) => void>();
  private ended: KnobError | null = null;
  /** The shared cancel flag of each call in flight, when the channel sends them. */
  private readonly cancelFlags = new Map<number, Int32Array>();
  /** Replies that came for a call no longer waiting (cancelled before the worker saw it). */
  dropped = 0;

  constructor(
    private readonly port: RequestPort<Request>,
    /** The worker, as errors name it ("the analysis thread"). */
    readonly what: string,
    private readonly endOnCancel?: () => void,
    /** Send each request a shared cancel flag (worker-protocol.ts): threads only, not processes. */
    private readonly sharedCancel = false,
  ) {}

  /** Calls in flight. */
  get size(): number {
    return this.calls.size;
  }

  /** Why the channel ended, or null while it serves. */
  get endedWith(): KnobError | null {
    return this.ended;
  }

  call(request: Request, options: CallOptions = {}): Promise<Result> {
    if (options.signal?.aborted) return Promise.reject(cancelledError(options.what ?? this.what));
    if (this.ended !== null) return Promise.reject(this.ended);
    const { onProgress } = options;
    let callId = 0;
    const answer = this.calls.call(
      (id) => {
        callId = id;
        if (onProgress !== undefined) this.progress.set(id, onProgress);
        const cancelFlag = this.sharedCancel ? new Int32Array(new SharedArrayBuffer(4)) : undefined;
        if (cancelFlag !== undefined) this.cancelFlags.set(id, cancelFlag);
        this.port.postMessage({ id, request, cancelFlag } satisfies ToWorker<Request>, options.transfer);
      },
      { signal: options.signal, what: options.what ?? this.what, onCancel: (id) => this.cancelled(id, options) },
    );
    return answer.finally(() => {
      this.progress.delete(callId);
      this.cancelFlags.delete(callId);
    });
  }

  private cancelled(id: number, options: CallOptions): void {
    this.progress.delete(id);
    const flag = this.cancelFlags.get(id);
    if (flag !== undefined) Atomics.store(flag, 0, 1);
    if (this.endOnCancel !== undefined) {
      this.end(cancelledError(this.what));
      this.endOnCancel();
    } else {
      try {
        this.port.postMessage({ cancel: id } satisfies ToWorker<Request>);
      } catch {
        // a port already closed has nothing left to cancel
      }
    }
    options.onCancel?.();
  }

  /** A message from the worker. */
  receive(message: FromWorker<Result>): void {
    // that the worker serves matters only to a thread's channel, which listens for it (ThreadChannel)
    if (isReadyMessage(message)) return;
    if (typeof message !== 'object' || message === null || typeof message.id !== 'number') {
      this.end(new KnobError('INTERNAL', `${this.what} sent a message that is not the protocol's`));
      return;
    }
    if ('progress' in message) {
      this.progress.get(message.id)?.(message.progress);
      return;
    }
    const settled =
      'result' in message
        ? this.calls.resolve(message.id, message.result)
        : this.calls.reject(message.id, KnobError.fromPayload(message.error));
    if (!settled) this.dropped++;
  }

  /** The worker is gone (or closed): every pending call and every later one fails with `error`. */
  end(error: KnobError): void {
    if (this.ended !== null) return;
    this.ended = error;
    this.progress.clear();
    this.calls.failAll(error);
  }
}

/**
 * A channel over a worker thread, wired to its events; `close` ends it. The thread is terminated
 * only once it has said it serves (worker-protocol.ts) or has exited: a channel closed or cancelled
 * while its thread still loads fails its calls at once, and the thread ends as soon as it has loaded.
 */
export class ThreadChannel<Request, Result> extends WorkerChannel<Request, Result> {
  constructor(
    readonly worker: Worker,
    what: string,
    /**
     * For synchronous work: a cancelled call ends the thread (see WorkerChannel), or, with
     * `sharedCancel`, sets the call's shared flag that the work polls (a thread that keeps state).
     */
    options: { cancelEndsThread?: boolean; sharedCancel?: boolean } = {},
  ) {
    let loaded = (): void => {};
    const serving = new Promise<void>((resolve) => (loaded = resolve));
    let ending: Promise<void> | null = null;
    const endThread = (): Promise<void> =>
      (ending ??= serving.then(async () => {
        await worker.terminate();
      }));
    super(
      worker,
      what,
      options.cancelEndsThread === true ? () => void endThread() : undefined,
      options.sharedCancel === true,
    );
    this.endThread = endThread;
    worker.on('message', (message: FromWorker<Result>) => {
      if (isReadyMessage(message)) loaded();
      this.receive(message);
    });
    worker.on('error', (error) => {
      loaded();
      this.end(new KnobError('INTERNAL', `${what} failed: ${error.message}`));
    });
    worker.on('messageerror', (error) =>
      this.end(new KnobError('INTERNAL', `${what}'s reply could not be read: ${error.message}`)),
    );
    worker.on('exit', (code) => {
      loaded();
      this.end(new KnobError('INTERNAL', `${what} exited (code ${code})`));
    });
  }

  private readonly endThread: () => Promise<void>;

  /** Ends the thread (once it has loaded); calls still pending fail at once with `error` (by default: the thread was closed). */
  async close(error = new KnobError('INTERNAL', `${this.what} was closed`)): Promise<void> {
    this.end(error);
    await this.endThread();
  }
}
