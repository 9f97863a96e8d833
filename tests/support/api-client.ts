import { fork, type ChildProcess } from 'node:child_process';
import WebSocket from 'ws';

/**
 * A test's client of a host process (host-process.ts): typed-enough calls over the WebSocket, with
 * a time limit per call, and the host's peak memory on request.
 */
export interface HostProcess {
  child: ChildProcess;
  port: number;
  token: string;
  socket: WebSocket;
  call(method: string, params?: unknown, timeoutMs?: number): Promise<Reply>;
  peakRssMb(): Promise<number>;
  /** The host's threads now and its CPU time so far (microseconds). */
  usage(): Promise<{ threads: number; cpuMicros: number }>;
  stop(): Promise<void>;
}

export interface Reply {
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string; errorId?: string };
  elapsedMs: number;
}

export async function startHostProcess(): Promise<HostProcess> {
  const child = fork('tests/support/host-process.ts', [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { port, token } = await new Promise<{ port: number; token: string }>((resolve, reject) => {
    child.once('message', (message) => resolve(message as { port: number; token: string }));
    child.once('exit', (code) => reject(new Error(`host process exited (${code}) before serving`)));
  });
  const socket = new WebSocket(`ws://127.0.0.1:${port}/api?token=${encodeURIComponent(token)}`);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const waiting = new Map<number, (reply: Omit<Reply, 'elapsedMs'>) => void>();
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as { id?: number } & Omit<Reply, 'elapsedMs'>;
    if (typeof message.id === 'number') waiting.get(message.id)?.(message);
  });
  let nextId = 1;
  return {
    child,
    port,
    token,
    socket,
    call(method, params = {}, timeoutMs = 10_000) {
      const id = nextId++;
      const started = performance.now();
      return new Promise<Reply>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${method} got no answer within ${timeoutMs} ms`)), timeoutMs);
        waiting.set(id, (reply) => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve({ ...reply, elapsedMs: performance.now() - started });
        });
        socket.send(JSON.stringify({ id, method, params }));
      });
    },
    peakRssMb() {
      return new Promise((resolve) => {
        child.once('message', (message) => resolve((message as { peakRssKb: number }).peakRssKb / 1024));
        child.send('peak');
      });
    },
    usage() {
      return new Promise((resolve) => {
        const onMessage = (message: unknown) => {
          if (typeof message !== 'object' || message === null || !('threads' in message)) return;
          child.off('message', onMessage);
          resolve(message as { threads: number; cpuMicros: number });
        };
        child.on('message', onMessage);
        child.send('usage');
      });
    },
    async stop() {
      socket.close();
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send('stop');
      await exited;
    },
  };
}
