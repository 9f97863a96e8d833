import type { ApiEvent, ApiEventData, ApiMethod, ApiParams, ApiResult } from '../../../src-shared/api/contract';
import { ApiCallError, type KnobApi } from '../../../src-shared/api/client';
import type { EventEnvelope, RequestEnvelope, ResponseEnvelope } from '../../../src-shared/api/envelope';

/** A transport moves envelopes; it knows nothing of methods or types. */
export interface EnvelopeTransport {
  send(request: RequestEnvelope): void;
  /** Called by the transport for every response or event it receives. */
  setReceiver(receiver: (message: ResponseEnvelope | EventEnvelope) => void): void;
  /** Called by the transport when the link is lost; pending calls are rejected. */
  setDisconnectHandler(handler: (reason: string) => void): void;
  /** Sends one binary frame packet on the frame path (dropped while the link is down: latest wins). */
  sendFrame(packet: Uint8Array): void;
}

/**
 * The typed API over any transport: ids, pending calls, event listeners. Components use only the
 * KnobApi interface, so they never know whether Electron IPC or a WebSocket carries their calls.
 */
export function createEnvelopeApi(transport: EnvelopeTransport): KnobApi {
  let nextId = 1;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  const listeners = new Map<string, Set<(data: unknown) => void>>();

  transport.setReceiver((message) => {
    if ('event' in message) {
      for (const listener of listeners.get(message.event) ?? []) listener(message.data);
      return;
    }
    if (typeof message.id !== 'number') return;
    const call = pending.get(message.id);
    if (call === undefined) return;
    pending.delete(message.id);
    if (message.ok) call.resolve(message.result);
    else call.reject(new ApiCallError(message.error));
  });
  transport.setDisconnectHandler((reason) => {
    for (const call of pending.values()) call.reject(new ApiCallError({ code: 'DISCONNECTED', message: reason }));
    pending.clear();
  });

  return {
    call<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiResult<M>> {
      const id = nextId++;
      return new Promise<ApiResult<M>>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        transport.send({ id, method, params });
      });
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
