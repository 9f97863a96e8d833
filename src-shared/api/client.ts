import type { ApiEvent, ApiEventData, ApiMethod, ApiParams, ApiResult } from './contract';
import type { KnobErrorPayload } from '../errors';

/**
 * What the renderer's components see: typed calls and typed events, whatever the transport
 * (Electron IPC or WebSocket). A failed call rejects with an ApiCallError carrying { code, message }.
 */
export interface KnobApi {
  call<M extends ApiMethod>(method: M, params: ApiParams<M>): Promise<ApiResult<M>>;
  on<E extends ApiEvent>(event: E, listener: (data: ApiEventData<E>) => void): () => void;
  /** The binary frame path (camera): one encoded frame packet, fire and forget; refusals arrive as 'frame.rejected'. */
  sendFrame(packet: Uint8Array): void;
}

export class ApiCallError extends Error {
  readonly code: string;

  constructor(payload: KnobErrorPayload | { code: string; message: string }) {
    super(payload.message);
    this.name = 'ApiCallError';
    this.code = payload.code;
  }
}
