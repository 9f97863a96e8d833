import { serialize } from 'node:v8';
import { isApiMethod, type ApiMethod } from '../../../src-shared/api/contract';
import { untilCancelled } from '../../../src-shared/cancel-signal';
import {
  CancelEnvelopeSchema,
  MAX_REQUEST_BYTES,
  RequestEnvelopeSchema,
  type RequestId,
  type ResponseEnvelope,
} from '../../../src-shared/api/envelope';
import { KnobError, toErrorPayload } from '../../../src-shared/errors';
import { describeIssues } from '../../../src-shared/zod-issues';
import type { KnobBackend } from './knob-backend';
import type { CallContext } from '../calls/call-context';
import { checkResponseSize } from '../api/message-size';

/**
 * Methods a connection runs one at a time (each holds a thread of its own for seconds): a second
 * call waits for the first to settle (issue 26).
 */
const ONE_AT_A_TIME: ReadonlySet<ApiMethod> = new Set<ApiMethod>(['analysis.run']);

/** Progress events of one call at most this often (the UI needs no more). */
const PROGRESS_INTERVAL_MS = 100;

/**
 * One client's link to the backend (a WebSocket, or a window's IPC): turns each untrusted message
 * (JSON text from a socket, or a structured-clone object from IPC) into at most one response, and
 * keeps the calls in flight so that `{ cancel: id }` aborts that call's work, and closing the
 * connection aborts them all. Never throws: every failure becomes `{ ok: false, error }`. An answer
 * over MAX_RESPONSE_BYTES (message-size.ts) is refused as REQUEST_TOO_LARGE, never sent.
 */
export class ApiConnection {
  private readonly inFlight = new Map<RequestId, AbortController>();
  /** The last call of each ONE_AT_A_TIME method, settled when it has. */
  private readonly turns = new Map<ApiMethod, Promise<void>>();

  constructor(private readonly backend: KnobBackend) {}

  /** The response to send, or null for a message that needs none (a cancel). */
  async receive(raw: unknown): Promise<ResponseEnvelope | null> {
    let id: RequestId | null = null;
    try {
      const message = parseMessage(raw);
      const cancel = CancelEnvelopeSchema.safeParse(message);
      if (cancel.success) {
        this.inFlight.get(cancel.data.cancel)?.abort();
        return null;
      }
      const envelope = RequestEnvelopeSchema.safeParse(message);
      if (!envelope.success)
        throw new KnobError('BAD_REQUEST', `malformed request: ${describeIssues(envelope.error.issues)}`);
      id = envelope.data.id;
      const { method } = envelope.data;
      if (!isApiMethod(method)) throw new KnobError('UNKNOWN_METHOD', `unknown method '${method.slice(0, 64)}'`);
      if (this.inFlight.has(id)) throw new KnobError('BAD_REQUEST', `request id ${String(id)} is already in flight`);
      const controller = new AbortController();
      this.inFlight.set(id, controller);
      const context = this.context(id, controller.signal);
      try {
        const params = envelope.data.params;
        const result = ONE_AT_A_TIME.has(method)
          ? await this.inTurn(method, controller.signal, () => this.backend.call(method, params, context))
          : await this.backend.call(method, params, context);
        checkResponseSize(method, result);
        return { id, ok: true, result };
      } finally {
        this.inFlight.delete(id);
        context.finish();
      }
    } catch (error) {
      return { id, ok: false, error: toErrorPayload(error) };
    }
  }

  /**
   * Runs `work` after the connection's previous call of `method` has settled: a second call waits
   * (cancellable while it waits) rather than being refused, so the desk's "cancel the old one, start
   * the new one" never races the old thread's end.
   */
  private async inTurn<T>(method: ApiMethod, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
    const previous = this.turns.get(method) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.turns.set(method, tail);
    // forgotten only once the whole chain has settled: a waiter cancelled while an earlier call
    // still runs must not let the next call start beside it
    void tail.then(() => {
      if (this.turns.get(method) === tail) this.turns.delete(method);
    });
    try {
      await untilCancelled(previous, signal, `${method} (waiting for the one before it)`);
      return await work();
    } finally {
      release();
    }
  }

  /** The client went away: whatever it was waiting for is cancelled. */
  close(): void {
    for (const controller of this.inFlight.values()) controller.abort();
    this.inFlight.clear();
  }

  /** The call's context; `finish` closes its progress (a call that reported any ends with finished: true). */
  private context(requestId: RequestId, signal: AbortSignal): CallContext & { finish(): void } {
    let lastEmit = -Infinity;
    let last: { task: string; done: number; total: number | null; finished: boolean } | null = null;
    const emit = (progress: NonNullable<typeof last>): void => {
      last = progress;
      this.backend.emit('work.progress', { requestId, ...progress });
    };
    return {
      signal,
      progress: (task, done, total) => {
        const now = performance.now();
        const finished = total !== null && done >= total;
        if (!finished && now - lastEmit < PROGRESS_INTERVAL_MS) return;
        lastEmit = now;
        emit({ task, done, total, finished });
      },
      finish: () => {
        if (last !== null && !last.finished) emit({ ...last, finished: true });
      },
    };
  }
}

/**
 * The message as a value, within MAX_REQUEST_BYTES either way it comes: JSON text (a socket) is
 * measured as UTF-8; a structured-clone object (IPC, already deserialised by Electron) by its size
 * in V8's serialisation, the format that carried it.
 */
function parseMessage(raw: unknown): unknown {
  if (typeof raw !== 'string') {
    let bytes: number;
    try {
      bytes = serialize(raw).byteLength;
    } catch {
      throw new KnobError('BAD_REQUEST', 'request is not a plain value');
    }
    if (bytes > MAX_REQUEST_BYTES)
      throw new KnobError('REQUEST_TOO_LARGE', `request of ${bytes} bytes exceeds ${MAX_REQUEST_BYTES}`);
    return raw;
  }
  if (raw.length > MAX_REQUEST_BYTES || Buffer.byteLength(raw, 'utf8') > MAX_REQUEST_BYTES) {
    throw new KnobError(
      'REQUEST_TOO_LARGE',
      `request of ${Buffer.byteLength(raw, 'utf8')} bytes exceeds ${MAX_REQUEST_BYTES}`,
    );
  }
  try {
    return JSON.parse(raw);
  } catch {
    throw new KnobError('BAD_REQUEST', 'request is not valid JSON');
  }
}
