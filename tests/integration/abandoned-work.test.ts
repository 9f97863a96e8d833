/**
 * Issue 26, part 2: work the caller abandons stops. Six heavy calls (two analyses, two tunes, a
 * calibrator comparison, a metrics snapshot) are started on one connection, which then closes: the
 * host's worker threads end and its CPU goes quiet, each seen through bounded waits on the host
 * process's own thread count and CPU time (no latency is asserted). `analysis.run` answers the
 * cancel envelope with CANCELLED, and a connection runs one analysis at a time: a second one waits
 * for the first and then runs, also when a waiter between them was cancelled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startHostProcess, type HostProcess } from '../support/api-client';

let host: HostProcess;
let baselineThreads = 0;

interface RawReply {
  id: number;
  ok: boolean;
  error?: { code: string; message: string };
}

/** A second client of the host, sending raw envelopes (cancels included) and collecting replies. */
async function rawClient(): Promise<{
  socket: WebSocket;
  send(message: unknown): void;
  reply(id: number, timeoutMs?: number): Promise<RawReply>;
  /** Reply ids in the order they arrived. */
  arrived: number[];
}> {
  const socket = new WebSocket(`ws://127.0.0.1:${host.port}/api?token=${encodeURIComponent(host.token)}`);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const replies = new Map<number, RawReply>();
  const arrived: number[] = [];
  const waiting = new Map<number, (reply: RawReply) => void>();
  socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as Partial<RawReply>;
    if (typeof message.id !== 'number') return;
    const reply = message as RawReply;
    replies.set(reply.id, reply);
    arrived.push(reply.id);
    waiting.get(reply.id)?.(reply);
  });
  return {
    socket,
    arrived,
    send: (message) => socket.send(JSON.stringify(message)),
    reply: (id, timeoutMs = 120_000) =>
      replies.has(id)
        ? Promise.resolve(replies.get(id)!)
        : new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`no reply to ${id} within ${timeoutMs} ms`)), timeoutMs);
            waiting.set(id, (reply) => {
              clearTimeout(timer);
              resolve(reply);
            });
          }),
  };
}

/** Polls `condition` on the host's usage until it holds (true) or `timeoutMs` passes (false). */
async function eventually(
  condition: (now: { threads: number; cpuMicros: number }, before: { threads: number; cpuMicros: number }) => boolean,
  timeoutMs: number,
  intervalMs = 500,
): Promise<{ held: boolean; last: { threads: number; cpuMicros: number } }> {
  const deadline = Date.now() + timeoutMs;
  let before = await host.usage();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    const now = await host.usage();
    if (condition(now, before)) return { held: true, last: now };
    if (Date.now() > deadline) return { held: false, last: now };
    before = now;
  }
}

beforeAll(async () => {
  host = await startHostProcess();
  for (const [method, params] of [
    ['model.load', { path: 'default' }],
    ['source.open', { kind: 'embedded', discard: true }],
    ['stream.runOffline', { maxFrames: 4000, discard: true }],
  ] as const)
    expect((await host.call(method, params, 180_000)).ok, method).toBe(true);
  // one snapshot first, so the metrics worker (kept between calls) counts in the baseline
  expect((await host.call('metrics.snapshot', { detail: 'light' }, 120_000)).ok).toBe(true);
  baselineThreads = (await host.usage()).threads;
}, 240_000);
afterAll(async () => host?.stop());

describe('work the caller abandons stops', () => {
  it('six calls, then the connection closes: the threads end and the CPU goes quiet', async () => {
    const client = await rawClient();
    const calls: Array<[string, unknown]> = [
      ['analysis.run', { permutations: 100_000 }],
      ['analysis.run', { permutations: 100_000 }],
      ['tune.run', {}],
      ['tune.run', {}],
      ['calibrator.compare', { methods: ['temperature', 'isotonic', 'dirichlet'], split: { kind: 'kfold' } }],
      ['metrics.snapshot', { detail: 'full' }],
    ];
    calls.forEach(([method, params], i) => client.send({ id: i + 1, method, params }));
    // the work has started: threads beyond the baseline (the analysis thread, the tuning pools)
    const started = await eventually((now) => now.threads >= baselineThreads + 3, 60_000, 200);
    expect(started.held, `threads ${started.last.threads}, baseline ${baselineThreads}`).toBe(true);
    client.socket.close();
    // released: back to the baseline's threads, and under 10 % of one core over half a second
    const released = await eventually(
      (now, before) => now.threads <= baselineThreads + 1 && now.cpuMicros - before.cpuMicros < 50_000,
      60_000,
    );
    expect(released.held, `threads ${released.last.threads}, baseline ${baselineThreads}`).toBe(true);
    expect((await host.call('session.get')).ok).toBe(true);
  }, 180_000);

  it('analysis.run answers the cancel envelope with CANCELLED; a second one waits for the first, then runs', async () => {
    const client = await rawClient();
    try {
      // the metrics worker may have ended with the last test's connection: count from here
      const idleThreads = (await host.usage()).threads;
      client.send({ id: 1, method: 'analysis.run', params: { permutations: 100_000 } });
      client.send({ id: 2, method: 'analysis.run', params: { permutations: 19 } });
      const started = await eventually((now) => now.threads >= idleThreads + 1, 60_000, 200);
      expect(started.held).toBe(true);
      client.send({ cancel: 1 });
      const first = await client.reply(1);
      expect(first.ok).toBe(false);
      expect(first.error?.code).toBe('CANCELLED');
      const second = await client.reply(2);
      expect(second.ok, second.error?.message).toBe(true);
      const released = await eventually((now) => now.threads <= idleThreads, 60_000);
      expect(released.held, `threads ${released.last.threads}, idle ${idleThreads}`).toBe(true);
    } finally {
      client.socket.close();
    }
  }, 180_000);

  it("a cancelled calibrator comparison does not fail the next client's call", async () => {
    const client = await rawClient();
    try {
      // a call the metrics worker takes most of a minute over uncancelled (a snapshot of a
      // recording it already holds can finish before a cancel arrives); it runs on the worker's
      // helper thread (the comparison's heavier share), and the cancel must reach it there: the
      // host's CPU goes quiet well before the fit would have ended (it stayed busy for about 50 s
      // when the worker waited for the share), and the next call is answered
      const slow = { methods: ['dirichlet'], split: { kind: 'kfold' } };
      client.send({ id: 1, method: 'calibrator.compare', params: slow });
      await new Promise((resolve) => setTimeout(resolve, 200));
      client.send({ cancel: 1 });
      expect((await client.reply(1)).error?.code).toBe('CANCELLED');
      const quiet = await eventually((now, before) => now.cpuMicros - before.cpuMicros < 50_000, 20_000);
      expect(quiet.held, 'the host was still busy 20 s after the cancel').toBe(true);
      // on the other connection: the worker (kept, with its recording) answers the next call
      const next = await host.call('metrics.snapshot', { detail: 'light' }, 120_000);
      expect(next.ok, next.error?.message).toBe(true);
    } finally {
      client.socket.close();
    }
  }, 180_000);

  it('a waiter cancelled while the first analysis runs does not let the next one start beside it', async () => {
    const client = await rawClient();
    try {
      client.send({ id: 1, method: 'analysis.run', params: { permutations: 100_000 } });
      client.send({ id: 2, method: 'analysis.run', params: { permutations: 19 } });
      client.send({ id: 3, method: 'analysis.run', params: { permutations: 19 } });
      client.send({ cancel: 2 });
      expect((await client.reply(2)).error?.code).toBe('CANCELLED');
      const [first, third] = [await client.reply(1), await client.reply(3)];
      expect(first.ok, first.error?.message).toBe(true);
      expect(third.ok, third.error?.message).toBe(true);
      // the third waited for the first (it takes far less alone, so it would have answered first)
      expect(client.arrived).toEqual([2, 1, 3]);
    } finally {
      client.socket.close();
    }
  }, 180_000);
});
