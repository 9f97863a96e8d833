import type { KnobBridge } from '../../../src-shared/api/bridge';
import type { EventEnvelope, ResponseEnvelope } from '../../../src-shared/api/envelope';
import type { EnvelopeTransport } from './envelope-api';

/** Electron: envelopes go through the preload's contextBridge (ipcRenderer.invoke underneath). */
export function createBridgeTransport(bridge: KnobBridge): EnvelopeTransport {
  let receiver: (message: ResponseEnvelope | EventEnvelope) => void = () => {};
  bridge.onEvent((message) => receiver(message));
  return {
    send(message) {
      if ('cancel' in message) bridge.cancel(message);
      else void bridge.request(message).then((response) => receiver(response));
    },
    sendFrame(packet) {
      bridge.sendFrame(packet);
    },
    setReceiver(handler) {
      receiver = handler;
    },
    setDisconnectHandler() {
      // IPC lives as long as the window does.
    },
  };
}
