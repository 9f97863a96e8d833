import type { CancelSignal } from '../cancel-signal';
import type { ApiEvent, ApiEventData, ApiMethod, ApiParams, ApiResult } from './contract';

/**
 * What the renderer's components see: typed calls and typed events, whatever the transport
 * (Electron IPC or WebSocket). A failed call rejects with a KnobError carrying its code (and the
 * error id of an internal error); a call whose signal aborts is cancelled in the backend too.
 */
export interface KnobApi {
  call<M extends ApiMethod>(
    method: M,
    params: ApiParams<M>,
    options?: { signal?: CancelSignal },
  ): Promise<ApiResult<M>>;
  on<E extends ApiEvent>(event: E, listener: (data: ApiEventData<E>) => void): () => void;
  /** The binary frame path (camera): one encoded frame packet, fire and forget; refusals arrive as 'frame.rejected'. */
  sendFrame(packet: Uint8Array): void;
}
