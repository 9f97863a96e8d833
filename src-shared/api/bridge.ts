import type { EventEnvelope, RequestEnvelope, ResponseEnvelope } from './envelope';

/**
 * What the Electron preload exposes to the renderer as `window.knobBridge` (contextBridge):
 * one request channel and one event channel, nothing else of Electron or Node.
 */
export interface KnobBridge {
  request(message: RequestEnvelope): Promise<ResponseEnvelope>;
  onEvent(listener: (message: EventEnvelope) => void): () => void;
}

export const IPC_REQUEST_CHANNEL = 'knob:request';
export const IPC_EVENT_CHANNEL = 'knob:event';
