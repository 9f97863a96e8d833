import { fork } from 'node:child_process';
import { mainEntry } from '../workers/main-entry';
import { isReadyMessage } from '../workers/worker-protocol';
import type { FromInferenceProcess, ToInferenceProcess } from './inference-protocol';

/**
 * How the engine starts the inference process: one interface, two implementations that speak the
 * same protocol (inference-protocol.ts) with structured-clone messages. In Node (the CLI, browser
 * mode, the tests) `forkLauncher` uses child_process.fork. In Electron a fork would run the Electron
 * binary itself, which a packaged app with the RunAsNode fuse off refuses; the shell passes its
 * utilityProcess launcher instead (src-main/electron/utility-inference.ts). The child's side of
 * both is parent-channel.ts; the messages are the worker protocol's (worker-protocol.ts).
 */
export interface InferenceChild {
  /** The process id once it runs (undefined before, and after it exits). */
  readonly pid: number | undefined;
  /** Whether messages can still be sent. */
  readonly connected: boolean;
  send(message: ToInferenceProcess): void;
  /** Ends the process; resolves when it has exited. */
  kill(): Promise<void>;
}

export interface InferenceChildEvents {
  message(message: FromInferenceProcess): void;
  /** The process ended (or never started): why, with the last line it wrote to stderr. */
  exit(reason: string): void;
}

export type InferenceLauncher = (events: InferenceChildEvents) => InferenceChild;

/** The inference process's entry (main-entry.ts says which file): tsx loaded first for a TypeScript source. */
export function inferenceProcessEntry(): { path: string; execArgv: string[] } {
  const { path, typescript } = mainEntry(import.meta.url, 'inference-process');
  return { path, execArgv: typescript ? ['--import', 'tsx'] : [] };
}

/** Keeps the last 2,000 characters a process wrote to stderr: the reason given when it dies. */
export class StderrTail {
  private text = '';
  add(chunk: Buffer | string): void {
    this.text = (this.text + chunk.toString()).slice(-2000);
  }
  private started = false;
  /**
   * Called with every message from the process: the first answer (to the load) means what was
   * written before it is start-up chatter (e.g. a GPU provider probing), not a crash reason. The
   * process's `ready` comes before the load starts, so it clears nothing.
   */
  replied(message: FromInferenceProcess): void {
    if (this.started || isReadyMessage(message)) return;
    this.started = true;
    this.text = '';
  }
  /** `what`, with the last line written to stderr after a colon when there is one. */
  reason(what: string): string {
    const lastLine = this.text.trim().split('\n').pop() ?? '';
    return lastLine ? `${what}: ${lastLine}` : what;
  }
}

/** child_process.fork with the 'advanced' serialisation (typed arrays travel as binary). */
export const forkLauncher: InferenceLauncher = (events) => {
  const entry = inferenceProcessEntry();
  const child = fork(entry.path, [], {
    execArgv: entry.execArgv,
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  const stderr = new StderrTail();
  child.stderr?.on('data', (chunk: Buffer) => stderr.add(chunk));
  let ended = false;
  const end = (reason: string) => {
    if (ended) return;
    ended = true;
    events.exit(stderr.reason(reason));
  };
  child.on('message', (message: FromInferenceProcess) => {
    stderr.replied(message);
    events.message(message);
  });
  // 'error' also reports a failed send or kill of a running process; only one that never started
  // is an exit (a running one that died reports 'exit' itself)
  let spawned = false;
  child.once('spawn', () => (spawned = true));
  child.on('error', (error) => {
    if (!spawned) end(`inference process could not start: ${error.message}`);
  });
  child.on('exit', (code, signal) => end(`inference process exited (${signal ?? `code ${code}`})`));
  return {
    get pid() {
      return child.exitCode === null && child.signalCode === null ? child.pid : undefined;
    },
    get connected() {
      return child.connected;
    },
    send: (message) => void child.send(message),
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill();
      await exited;
    },
  };
};
