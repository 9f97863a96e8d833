import type { ApiEvent, ApiEventData, ApiMethod, ApiParams, ApiResult } from '../../../src-shared/api/contract';
import type { KnobApi } from '../../../src-shared/api/client';
import { Correlator } from '../../../src-shared/api/correlator';
import type {
  CancelEnvelope,
  EventEnvelope,
  RequestEnvelope,
  ResponseEnvelope,
} from '../../../src-shared/api/envelope';
import { KnobError } from '../../../src-shared/errors';

/** A transport moves envelopes; it knows nothing of methods or types. */
export interface EnvelopeTransport {
  send(message: RequestEnvelope | CancelEnvelope): void;
  /** Called by the transport for every response or event it receives. */
  setReceiver(receiver: (message: ResponseEnvelope | EventEnvelope) => void): void;
  /** Called by the transport when the link is lost; pending calls are rejected. */
  setDisconnectHandler(handler: (reason: string) => void): void;
  /** Sends one binary frame packet on the frame path (dropped while the link is down: latest wins). */
  sendFrame(packet: Uint8Array): void;
}

/**
 * The typed API over any transport: calls correlated by id (the same Correlator as the backend's
 * own channels), cancellation through each call's AbortSignal (the backend is told, and stops the
 * work), and event listeners. Components use only the KnobApi interface, so they never know whether
 * Electron IPC or a WebSocket carries their calls.
 */
export function createEnvelopeApi(transport: EnvelopeTransport): KnobApi {
  const calls = new Correlator<unknown>();
  const listeners = new Map<string, Set<(data: unknown) => void>>();

  transport.setReceiver((message) => {
    if ('event' in message) {
      for (const listener of listeners.get(message.event) ?? []) listener(message.data);
      return;
    }
    if (typeof message.id !== 'number') return;
    if (message.ok) calls.resolve(message.id, message.result);
    else calls.reject(message.id, KnobError.fromPayload(message.error));
  });
  transport.setDisconnectHandler((reason) => calls.failAll(new KnobError('DISCONNECTED', reason)));

  return {
    call<M extends ApiMethod>(
      method: M,
      params: ApiParams<M>,
      options: { signal?: AbortSignal } = {},
    ): Promise<ApiResult<M>> {
      return calls.call((id) => transport.send({ id, method, params }), {
        signal: options.signal,
        what: method,
        onCancel: (id) => transport.send({ cancel: id }),
      }) as Promise<ApiResult<M>>;
    },
    sendFrame(packet) {
      transport.sendFrame(packet);
    },
    on<E extends ApiEvent>(event: E, listener: (data: ApiEventData<E>) => void): () => void {
      const set = listeners.get(event) ?? new Set();
      listeners.set(event, set);
      const wrapped = listener as (data: unknown) => void;
      set.add(wrapped);
      return () => set.delete(wrapped);
    },
  };
}
