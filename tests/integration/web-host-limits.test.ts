/**
 * Local denial of service against the browser-mode host, bounded (src-main/host/connection-limits.ts):
 * a flood of idle TCP connections on 127.0.0.1 gets at most the cap of them accepted, the rest closed
 * at once; connections that never authenticate are closed after the timeout (waited for by their
 * 'close' events, with a bounded wait, never timed); an authenticated API socket keeps its answers
 * coming all along, and the freed slots take new clients.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { DEFAULT_MAX_SOCKETS } from '../../src-main/host/connection-limits';
import { startWebHost, type WebHost } from '../../src-main/host/web-host';

const FLOOD = 200;
/** Long enough never to fire in a test that is about the cap. */
const NEVER_MS = 10 * 60_000;
/** The bound on every wait here: a hang guard, not a latency figure. */
const WAIT_MS = 30_000;

const hosts: WebHost[] = [];
const backends: KnobBackend[] = [];
const clients: Array<Socket | WebSocket> = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill();
  for (const client of clients.splice(0))
    if (client instanceof WebSocket) client.terminate();
    else client.destroy();
  await Promise.all(hosts.splice(0).map((host) => host.close()));
  await Promise.all(backends.splice(0).map((backend) => backend.close()));
});

async function host(maxSockets: number, authTimeoutMs: number): Promise<WebHost> {
  const dir = mkdtempSync(join(tmpdir(), 'knob-host-limits-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
  const backend = new KnobBackend();
  backends.push(backend);
  const started = await startWebHost({ backend, rendererDir: dir, maxSockets, authTimeoutMs });
  hosts.push(started);
  return started;
}

/**
 * The host in a process of its own with `descriptors` file descriptors at most, as a user's shell
 * might leave it; resolves with its address once it listens. The limit is put on the running
 * process (prlimit, util-linux) once it has started: started under it, the test's own loader (tsx
 * reading the sources, hundreds of files at once) ran out before the host did anything, which a
 * packaged app, one bundled file, never meets.
 */
function hostProcess(descriptors: number): Promise<{ child: ChildProcess; address: Address }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'tests/support/host-process.ts'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  return bounded(
    new Promise((resolve, reject) => {
      child.once('message', (message) => {
        const limited = spawnSync('prlimit', [`--nofile=${descriptors}:${descriptors}`, '--pid', String(child.pid)], {
          encoding: 'utf8',
        });
        const limits = limited.status === 0 ? readFileSync(`/proc/${child.pid}/limits`, 'utf8') : '';
        if (!new RegExp(`Max open files\\s+${descriptors}\\s+${descriptors}`).test(limits))
          reject(new Error(`prlimit did not limit the host: ${limited.error?.message ?? limited.stderr}`));
        else resolve({ child, address: message as Address });
      });
      child.once('exit', (code) => reject(new Error(`the host process exited (${code}) before listening`)));
    }),
    'host process',
  );
}

/** Settles with `promise`, or fails naming `what` after WAIT_MS. */
function bounded<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${WAIT_MS} ms`)), WAIT_MS);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

interface RawClient {
  socket: Socket;
  /** Resolves when the server has closed it (the client never closes it itself in these tests). */
  closed: Promise<void>;
  isClosed: () => boolean;
}

/** A raw TCP connection that sends `bytes` (nothing: an idle socket) and then waits. */
function rawClient(port: number, bytes = ''): RawClient {
  const socket = tcpConnect({ host: '127.0.0.1', port });
  clients.push(socket);
  let closedYet = false;
  // a close by the server may come as a reset; either way it is a close
  socket.on('error', () => undefined);
  if (bytes !== '') socket.once('connect', () => socket.write(bytes));
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      closedYet = true;
      resolve();
    }),
  );
  return { socket, closed, isClosed: () => closedYet };
}

/** Waits (bounded) until the server has closed `count` of `flood`. */
function refusals(flood: RawClient[], count: number): Promise<void> {
  const closedCount = (): number => flood.filter((c) => c.isClosed()).length;
  return bounded(
    (async () => {
      while (closedCount() < count) await Promise.race(flood.filter((c) => !c.isClosed()).map((c) => c.closed));
    })(),
    `${count} refusals`,
  );
}

function connected(client: RawClient): Promise<void> {
  return new Promise((resolve) => {
    if (client.socket.readyState === 'open' || client.isClosed()) resolve();
    else client.socket.once('connect', () => resolve());
    void client.closed.then(() => resolve());
  });
}

type Address = Pick<WebHost, 'port' | 'token'>;

function apiSocket(target: Address): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${target.port}/api?token=${encodeURIComponent(target.token)}`);
    clients.push(ws);
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_request, response) => reject(new Error(`HTTP ${response.statusCode}`)));
    ws.once('error', reject);
  });
}

/**
 * An API socket once the host has seen a slot freed: the client's own close comes before the
 * server has read it, so a few tries (bounded) may meet a still-full host.
 */
async function apiSocketOnceFreed(target: Address): Promise<WebSocket> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await apiSocket(target);
    } catch (error) {
      if (attempt === 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

let nextId = 1;
function call(
  ws: WebSocket,
  method: string,
  params: unknown = {},
): Promise<{ ok: boolean; error?: { code: string; message: string } }> {
  const id = nextId++;
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData): void => {
      const message = JSON.parse(data.toString()) as { id?: number; ok: boolean };
      if (message.id !== id) return;
      ws.off('message', onMessage);
      resolve(message);
    };
    ws.on('message', onMessage);
    ws.send(JSON.stringify({ id, method, params }));
  });
}

describe('the browser-mode host under a flood of local connections', () => {
  it(`accepts at most its cap of ${FLOOD} idle sockets, closes the rest at once, and keeps answering its desk`, async () => {
    const cap = 16;
    const target = await host(cap, NEVER_MS);
    const desk = await apiSocket(target);
    const flood = Array.from({ length: FLOOD }, () => rawClient(target.port));
    await bounded(Promise.all(flood.map(connected)), 'connection settled');
    // The desk holds one slot: all but cap - 1 of the flood are closed by the server.
    await refusals(flood, FLOOD - (cap - 1));
    expect((await call(desk, 'app.info')).ok).toBe(true);
    // The timeout is far away: the accepted ones are still open, exactly cap - 1 of them.
    const open = flood.filter((c) => !c.isClosed());
    expect(open).toHaveLength(cap - 1);
    // A full host refuses a new desk too, until a slot is freed.
    await expect(apiSocket(target)).rejects.toThrow();
    open[0]!.socket.destroy();
    await open[0]!.closed;
    const second = await apiSocketOnceFreed(target);
    expect((await call(second, 'app.info')).ok).toBe(true);
    expect((await call(desk, 'knobs.get')).ok).toBe(true);
  });

  it('closes connections that do not authenticate within the timeout; an authenticated socket stays', async () => {
    const target = await host(16, 300);
    const desk = await apiSocket(target);
    const idle = Array.from({ length: 10 }, () => rawClient(target.port));
    // and the slow-headers kind: a request that never ends its headers (Node's own limit is 60 s)
    const slowHeaders = rawClient(target.port, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await bounded(Promise.all([...idle, slowHeaders].map((c) => c.closed)), 'timeout close');
    expect(desk.readyState).toBe(WebSocket.OPEN);
    expect((await call(desk, 'app.info')).ok).toBe(true);
    // a page request still gets its answer (the timeout closes idle connections, not requests)
    const page = await fetch(`http://127.0.0.1:${target.port}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>t</title>');
  });

  it(`a host process with 128 descriptors still opens files with ${FLOOD} idle connections on its port`, async () => {
    // About 28 descriptors are the process's own; without the cap the flood took the other 100.
    const { address } = await hostProcess(128);
    const desk = await apiSocket(address);
    const flood = Array.from({ length: FLOOD }, () => rawClient(address.port));
    await bounded(Promise.all(flood.map(connected)), 'connection settled');
    await refusals(flood, FLOOD - (DEFAULT_MAX_SOCKETS - 1));
    // The open gets a descriptor and finds no file, rather than failing with EMFILE.
    const missing = join(mkdtempSync(join(tmpdir(), 'knob-no-model-')), 'm.onnx');
    const reply = await call(desk, 'model.load', { path: missing });
    expect(reply.error).toMatchObject({ code: 'INVALID_INPUT' });
    expect(reply.error!.message).toContain('does not exist');
  });

  it('frees the slots of timed-out connections for new clients', async () => {
    const cap = 8;
    const target = await host(cap, 300);
    const squatters = Array.from({ length: cap }, () => rawClient(target.port));
    await bounded(Promise.all(squatters.map((c) => c.closed)), 'timeout close');
    const desk = await apiSocketOnceFreed(target);
    expect((await call(desk, 'app.info')).ok).toBe(true);
  });
});
