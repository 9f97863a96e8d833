import type { ServePort } from '../workers/worker-serve';

/**
 * The inference process's line to the engine (inference-launcher.ts), as the port serve() answers
 * on: Electron's `process.parentPort` when it runs as a utility process, else Node's IPC channel
 * (child_process.fork). Both carry structured-clone messages, so the protocol is the same.
 */

/** Electron's parentPort, as much of it as is used (process.parentPort exists only in a utility process). */
interface ElectronParentPort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
}

export function parentChannel(): ServePort {
  const port = (process as { parentPort?: ElectronParentPort }).parentPort;
  if (port !== undefined)
    return {
      postMessage: (message) => port.postMessage(message),
      onMessage: (listener) => port.on('message', (event) => listener(event.data as Parameters<typeof listener>[0])),
    };
  return {
    postMessage: (message) => void process.send?.(message),
    onMessage: (listener) => process.on('message', (message) => listener(message as Parameters<typeof listener>[0])),
  };
}
