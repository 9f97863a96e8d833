import type { EventEnvelope, ResponseEnvelope } from '../../../src-shared/api/envelope';
import type { EnvelopeTransport } from './envelope-api';

const TOKEN_KEY = 'knob-studio.token';

/**
 * Browser mode: the per-run token arrives in the page URL (?token=...). It is kept for this tab
 * only (sessionStorage, so a reload still works) and removed from the address bar.
 */
export function takeSessionToken(): string | null {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl !== null) {
    sessionStorage.setItem(TOKEN_KEY, fromUrl);
    url.searchParams.delete('token');
    window.history.replaceState(null, '', url.toString());
    return fromUrl;
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

/** WebSocket transport to the browser-mode host; reconnects with backoff when the link drops. */
export function createSocketTransport(token: string): EnvelopeTransport {
  const url = `ws://${window.location.host}/api?token=${encodeURIComponent(token)}`;
  let receiver: (message: ResponseEnvelope | EventEnvelope) => void = () => {};
  let onDisconnect: (reason: string) => void = () => {};
  let socket: WebSocket;
  let queue: string[] = [];
  let retryMs = 250;

  const open = (): void => {
    socket = new WebSocket(url);
    socket.addEventListener('open', () => {
      retryMs = 250;
      for (const message of queue) socket.send(message);
      queue = [];
    });
    socket.addEventListener('message', (event: MessageEvent) => {
      if (typeof event.data !== 'string') return;
      try {
        receiver(JSON.parse(event.data) as ResponseEnvelope | EventEnvelope);
      } catch {
        // a malformed message from the host is dropped; the call it answered times out visibly
      }
    });
    socket.addEventListener('close', () => {
      onDisconnect('connection to the Knob Studio backend was lost; reconnecting');
      setTimeout(open, retryMs);
      retryMs = Math.min(5000, retryMs * 2);
    });
  };
  open();

  return {
    send(message) {
      const text = JSON.stringify(message);
      if (socket.readyState === WebSocket.OPEN) socket.send(text);
      else queue.push(text);
    },
    sendFrame(packet) {
      if (socket.readyState === WebSocket.OPEN) socket.send(packet);
    },
    setReceiver(handler) {
      receiver = handler;
    },
    setDisconnectHandler(handler) {
      onDisconnect = handler;
    },
  };
}
