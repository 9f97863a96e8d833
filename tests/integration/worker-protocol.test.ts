/**
 * The one worker protocol (src-main/core/workers: worker-protocol.ts, worker-channel.ts,
 * worker-serve.ts) between a real worker_threads Worker running serve() and the parent's
 * ThreadChannel: replies matched by id in any order, progress to the request it belongs to, cancel
 * by id (the worker's signal aborts; a request still waiting its turn never runs), a late reply
 * after a cancel dropped, a cancel that ends a thread of uninterruptible work, a shared cancel flag
 * that stops synchronous work without ending its thread, a result's buffers moved back (transferOf), and a worker that
 * exits failing everything pending with an error that names it. No clocks: the test holds requests
 * open through shared memory and waits on what the worker did.
 */
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { ThreadChannel } from '../../src-main/core/workers/worker-channel';
import type { WorkerProgress } from '../../src-main/core/workers/worker-protocol';
import type { ProtocolTestRequest } from '../support/protocol-test-worker';

const bootstrap = new URL('../../src-main/core/workers/ts-worker-bootstrap.mjs', import.meta.url);
const entry = pathToFileURL(new URL('../support/protocol-test-worker.ts', import.meta.url).pathname).href;
const channels: Array<ThreadChannel<ProtocolTestRequest, unknown>> = [];

function start(
  concurrent: boolean,
  options: { cancelEndsThread?: boolean; sharedCancel?: boolean } = {},
  loading?: Int32Array,
): ThreadChannel<ProtocolTestRequest, unknown> {
  const worker = new Worker(bootstrap, { workerData: { entry, concurrent, loading } });
  const channel = new ThreadChannel<ProtocolTestRequest, unknown>(worker, 'the test worker', options);
  channels.push(channel);
  return channel;
}

function shared(length = 2): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * length));
}

function release(gate: Int32Array): void {
  Atomics.store(gate, 0, 1);
  Atomics.notify(gate, 0);
}

const eventually = { timeout: 60_000, interval: 20 };

afterEach(async () => {
  for (const channel of channels.splice(0)) await channel.close();
});

describe('the worker protocol', () => {
  it('ends a thread closed or cancelled while it loads only once it serves, failing its calls at once', async () => {
    for (const how of ['close', 'cancel'] as const) {
      const loading = shared();
      const channel = start(false, { cancelEndsThread: true }, loading);
      const events: string[] = [];
      channel.worker.on('message', (message: { ready?: boolean }) => {
        if (message.ready === true) events.push('ready');
      });
      const exited = new Promise<void>((resolve) =>
        channel.worker.on('exit', () => {
          events.push('exit');
          resolve();
        }),
      );
      await expect.poll(() => Atomics.load(loading, 1), eventually).toBe(1);
      const controller = new AbortController();
      const call = channel.call({ kind: 'echo', value: 1 }, { signal: controller.signal });
      const closed = how === 'close' ? channel.close() : (controller.abort(), Promise.resolve());
      await expect(call).rejects.toMatchObject({ code: how === 'close' ? 'INTERNAL' : 'CANCELLED' });
      // still loading: the thread is not ended under it (Node can crash the process when it is)
      expect(events).toEqual([]);
      release(loading);
      await closed;
      await exited;
      expect(events, how).toEqual(['ready', 'exit']);
    }
  });

  it('settles each request with the reply under its own id, in the order the worker answers', async () => {
    const channel = start(true);
    const gate = shared();
    const settled: string[] = [];
    const held = channel.call({ kind: 'hold', gate }).then((value) => settled.push(`hold ${String(value)}`));
    const echoed = channel.call({ kind: 'echo', value: 7 }).then((value) => settled.push(`echo ${String(value)}`));
    await echoed;
    expect(settled).toEqual(['echo 7']);
    release(gate);
    await held;
    expect(settled).toEqual(['echo 7', 'hold released']);
    expect(channel.size).toBe(0);
  });

  it('delivers progress to the request it belongs to', async () => {
    const channel = start(true);
    const seen: Record<string, WorkerProgress[]> = { three: [], five: [] };
    const [three, five] = await Promise.all([
      channel.call({ kind: 'chunks', total: 3, seen: shared() }, { onProgress: (p) => seen.three!.push(p) }),
      channel.call({ kind: 'chunks', total: 5, seen: shared() }, { onProgress: (p) => seen.five!.push(p) }),
    ]);
    expect([three, five]).toEqual([3, 5]);
    expect(seen.three).toEqual([1, 2, 3].map((done) => ({ done, total: 3, stage: 'chunks' })));
    expect(seen.five).toEqual([1, 2, 3, 4, 5].map((done) => ({ done, total: 5, stage: 'chunks' })));
  });

  it("cancels a request by id: it fails at once, the worker's signal aborts, the others go on", async () => {
    const channel = start(true);
    const controller = new AbortController();
    const workerSaw = shared();
    let progressed = 0;
    const endless = channel.call(
      { kind: 'chunks', total: 0, seen: workerSaw },
      { signal: controller.signal, what: 'the endless request', onProgress: () => progressed++ },
    );
    await expect.poll(() => progressed, eventually).toBeGreaterThan(0);
    controller.abort();
    await expect(endless).rejects.toMatchObject({
      code: 'CANCELLED',
      message: 'the endless request was cancelled',
    });
    await expect.poll(() => Atomics.load(workerSaw, 0), eventually).toBeGreaterThan(0);
    expect(await channel.call({ kind: 'echo', value: 1 })).toBe(1);
    // the worker answered nothing for the cancelled request
    expect(channel.dropped).toBe(0);
  });

  it('drops a reply that comes after its request was cancelled', async () => {
    const channel = start(true);
    const gate = shared();
    const controller = new AbortController();
    const blocked = channel.call({ kind: 'block', gate }, { signal: controller.signal });
    await expect.poll(() => Atomics.load(gate, 1), eventually).toBe(1);
    // the thread is blocked: it sees the cancel only after it has answered
    controller.abort();
    await expect(blocked).rejects.toMatchObject({ code: 'CANCELLED' });
    release(gate);
    expect(await channel.call({ kind: 'echo', value: 2 })).toBe(2);
    expect(channel.dropped).toBe(1);
  });

  it('one request at a time: a request cancelled while waiting its turn never runs', async () => {
    const channel = start(false);
    const gate = shared();
    const marked = shared();
    const controller = new AbortController();
    const first = channel.call({ kind: 'block', gate });
    await expect.poll(() => Atomics.load(gate, 1), eventually).toBe(1);
    const waiting = channel.call({ kind: 'mark', seen: marked }, { signal: controller.signal });
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'CANCELLED' });
    release(gate);
    expect(await first).toBe('released');
    expect(await channel.call({ kind: 'echo', value: 3 })).toBe(3);
    expect(Atomics.load(marked, 0)).toBe(0);
    expect(channel.dropped).toBe(0);
  });

  it('a cancel can end a thread of uninterruptible work: every call on it answers CANCELLED', async () => {
    const channel = start(true, { cancelEndsThread: true });
    const gate = shared();
    const controller = new AbortController();
    const exited = new Promise<number>((resolve) => channel.worker.once('exit', resolve));
    const blocked = channel.call({ kind: 'block', gate }, { signal: controller.signal });
    const other = channel.call({ kind: 'hold', gate: shared() });
    await expect.poll(() => Atomics.load(gate, 1), eventually).toBe(1);
    controller.abort();
    await expect(blocked).rejects.toMatchObject({ code: 'CANCELLED' });
    await expect(other).rejects.toMatchObject({ code: 'CANCELLED', message: 'the test worker was cancelled' });
    // ended though its work never finished (the gate was never opened)
    await exited;
    await expect(channel.call({ kind: 'echo', value: 4 })).rejects.toMatchObject({ code: 'CANCELLED' });
  });

  it('a shared cancel flag stops synchronous work that reads no message, and the thread serves on', async () => {
    const channel = start(false, { sharedCancel: true });
    const seen = shared();
    const controller = new AbortController();
    const spinning = channel.call({ kind: 'spin', seen }, { signal: controller.signal });
    await expect.poll(() => Atomics.load(seen, 0), eventually).toBe(1);
    controller.abort();
    await expect(spinning).rejects.toMatchObject({ code: 'CANCELLED' });
    // the busy thread saw the flag (its 'cancel' message could not be read while it spun)
    await expect.poll(() => Atomics.load(seen, 1), eventually).toBe(1);
    expect(await channel.call({ kind: 'echo', value: 5 })).toBe(5);
    expect(channel.endedWith).toBeNull();
  });

  it('a worker that exits fails every pending request, and every later one, naming the worker', async () => {
    const channel = start(true);
    const pending = [channel.call({ kind: 'hold', gate: shared() }), channel.call({ kind: 'hold', gate: shared() })];
    const exiting = channel.call({ kind: 'exit' });
    for (const call of [...pending, exiting])
      await expect(call).rejects.toMatchObject({ code: 'INTERNAL', message: 'the test worker exited (code 3)' });
    await expect(channel.call({ kind: 'echo', value: 5 })).rejects.toThrow('the test worker exited (code 3)');
  });

  it("a handler's error reaches its caller typed, and the worker serves on", async () => {
    const channel = start(false);
    await expect(channel.call({ kind: 'fail' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: 'the request was refused',
    });
    expect(await channel.call({ kind: 'echo', value: 6 })).toBe(6);
  });

  it("moves the buffers a result names (serve's transferOf) to the parent instead of copying them", async () => {
    const channel = start(false);
    const sent = new Float64Array([1.5, -2, 3]);
    const reply = (await channel.call({ kind: 'handBack', buffer: sent.buffer }, { transfer: [sent.buffer] })) as {
      buffer: ArrayBuffer;
    };
    expect(sent.length).toBe(0);
    expect([...new Float64Array(reply.buffer)]).toEqual([1.5, -2, 3]);
    expect(await channel.call({ kind: 'keptLength' })).toBe(0);
  });
});
