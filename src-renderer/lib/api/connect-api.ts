import type { KnobBridge } from '../../../src-shared/api/bridge';
import type { KnobApi } from '../../../src-shared/api/client';
import { createBridgeTransport } from './bridge-transport';
import { createEnvelopeApi } from './envelope-api';
import { createSocketTransport, takeSessionToken } from './socket-transport';

declare global {
  interface Window {
    knobBridge?: KnobBridge;
  }
}

/** Picks the transport once at start: the Electron preload bridge if present, else the WebSocket. */
export function connectApi(): KnobApi {
  if (window.knobBridge !== undefined) return createEnvelopeApi(createBridgeTransport(window.knobBridge));
  const token = takeSessionToken();
  if (token === null) {
    throw new Error('This page needs the address printed by `npm run web` (it carries the session token).');
  }
  return createEnvelopeApi(createSocketTransport(token));
}
