import { utilityProcess } from 'electron';
import { inferenceProcessEntry, StderrTail, type InferenceLauncher } from '../core/inference/inference-launcher';
import type { FromInferenceProcess } from '../core/inference/inference-protocol';

/**
 * The inference process as an Electron utility process (the supported way to run a Node child in
 * Electron: a child_process.fork would start the Electron binary itself, which the packaged app's
 * RunAsNode fuse forbids). Same protocol as child_process.fork: the child talks through
 * process.parentPort (parent-channel.ts) with structured-clone messages.
 */
export const utilityLauncher: InferenceLauncher = (events) => {
  const entry = inferenceProcessEntry();
  const child = utilityProcess.fork(entry.path, [], {
    serviceName: 'Knob Studio inference',
    stdio: ['ignore', 'ignore', 'pipe'],
    execArgv: entry.execArgv,
  });
  const stderr = new StderrTail();
  child.stderr?.on('data', (chunk: Buffer) => stderr.add(chunk));
  let running = true;
  let ended = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.on('message', (message: FromInferenceProcess) => {
    stderr.replied(message);
    events.message(message);
  });
  child.once('exit', (code: number) => {
    running = false;
    if (ended) return;
    ended = true;
    events.exit(stderr.reason(`inference process exited (code ${code})`));
  });
  return {
    get pid() {
      return running ? child.pid : undefined;
    },
    get connected() {
      return running;
    },
    send: (message) => child.postMessage(message),
    kill: async () => {
      if (!running) return;
      // Electron's kill does nothing before the process has spawned (its pid is still unset)
      if (child.pid === undefined)
        await new Promise<void>((resolve) => {
          child.once('spawn', () => resolve());
          void exited.then(resolve);
        });
      child.kill();
      await exited;
    },
  };
};
