// Loaded (--import) into a child started by the fake utilityProcess.fork: gives it the
// process.parentPort an Electron utility process has, over Node's IPC channel, and takes away
// process.send, which a utility process does not have. The child therefore runs its
// utility-process side (src-main/core/inference/parent-channel.ts) or cannot talk at all. As in
// Electron, messages wait until the child adds its first 'message' listener (the port starts then).
// Worker threads inherit the --import; only the process's main thread gets the port.
import { EventEmitter } from 'node:events';
import { isMainThread } from 'node:worker_threads';

const send = isMainThread && process.send ? process.send.bind(process) : null;
if (send) process.send = undefined;

class ParentPort extends EventEmitter {
  #queue = [];
  #started = false;
  constructor() {
    super();
    this.on('newListener', (name) => {
      if (name !== 'message' || this.#started) return;
      this.#started = true;
      // after the listener is added
      queueMicrotask(() => {
        for (const data of this.#queue.splice(0)) this.emit('message', { data });
      });
    });
  }
  deliver(data) {
    if (this.#started) this.emit('message', { data });
    else this.#queue.push(data);
  }
  postMessage(message) {
    send(message);
  }
}

if (send) {
  const parentPort = new ParentPort();
  process.on('message', (message) => parentPort.deliver(message));
  Object.defineProperty(process, 'parentPort', { value: parentPort, configurable: false });
}
