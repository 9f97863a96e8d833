import type { FromInferenceProcess, ToInferenceProcess } from './inference-protocol';

/**
 * The inference process's line to the engine (inference-launcher.ts): Electron's
 * `process.parentPort` when it runs as a utility process, else Node's IPC channel
 * (child_process.fork). Both carry structured-clone messages, so the protocol is the same.
 */
export interface ParentChannel {
  send(message: FromInferenceProcess): void;
  onMessage(listener: (message: ToInferenceProcess) => void): void;
}

/** Electron's parentPort, as much of it as is used (process.parentPort exists only in a utility process). */
interface ElectronParentPort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
}

export function parentChannel(): ParentChannel {
  const port = (process as { parentPort?: ElectronParentPort }).parentPort;
  if (port !== undefined)
    return {
      send: (message) => port.postMessage(message),
      onMessage: (listener) => port.on('message', (event) => listener(event.data as ToInferenceProcess)),
    };
  return {
    send: (message) => void process.send?.(message),
    onMessage: (listener) => process.on('message', (message) => listener(message as ToInferenceProcess)),
  };
}
