// A worker thread for the worker protocol's tests (tests/integration/worker-protocol.test.ts),
// served by the app's own serve(): one request at a time, or concurrently when workerData says so.
// Shared Int32Arrays let the test hold a request open and see what the worker did, without clocks.
import { workerData } from 'node:worker_threads';
import { KnobError } from '../../src-shared/errors';
import { serve } from '../../src-main/core/workers/worker-serve';

// Atomics.waitAsync (Node 16+) is newer than the tests' TypeScript lib
const { waitAsync } = Atomics as unknown as {
  waitAsync(array: Int32Array, index: number, value: number): { value: Promise<string> | string };
};

export type ProtocolTestRequest =
  | { kind: 'echo'; value: number }
  /** Waits without blocking the thread until gate[0] is set, then answers 'released'. */
  | { kind: 'hold'; gate: Int32Array }
  /** Sets gate[1], then blocks the thread until gate[0] is set (synchronous, uninterruptible work). */
  | { kind: 'block'; gate: Int32Array }
  /** Progress for `total` chunks then answers total; endless when total is 0, until cancelled. */
  | { kind: 'chunks'; total: number; seen: Int32Array }
  /**
   * Sets seen[0], then spins synchronously (no turn of the event loop, so no message is read)
   * until its signal says cancelled, then sets seen[1]: only a shared cancel flag can stop it.
   */
  | { kind: 'spin'; seen: Int32Array }
  /** Marks seen[0] when it runs. */
  | { kind: 'mark'; seen: Int32Array }
  | { kind: 'fail' }
  | { kind: 'exit' }
  /** Keeps the buffer and answers it (serve's transferOf moves it back). */
  | { kind: 'handBack'; buffer: ArrayBuffer }
  /** The byte length of the buffer last handed back, as this thread now sees it (0: it moved). */
  | { kind: 'keptLength' };

let kept: ArrayBuffer | null = null;

// workerData.loading: the thread stays in its module's evaluation, as one loading its modules
// does, until loading[0] is set (it sets loading[1] once there)
const { loading } = workerData as { loading?: Int32Array };
if (loading !== undefined) {
  Atomics.store(loading, 1, 1);
  Atomics.wait(loading, 0, 0);
}

serve<ProtocolTestRequest, unknown>(
  async (request, { signal, progress }) => {
    switch (request.kind) {
      case 'echo':
        return request.value;
      case 'hold':
        await waitAsync(request.gate, 0, 0).value;
        return 'released';
      case 'block':
        Atomics.store(request.gate, 1, 1);
        Atomics.wait(request.gate, 0, 0);
        return 'released';
      case 'chunks':
        for (let done = 1; request.total === 0 || done <= request.total; done++) {
          await new Promise((resolve) => setImmediate(resolve));
          if (signal.aborted) {
            // seen[0]: the chunk at which the worker saw the cancel
            Atomics.store(request.seen, 0, done);
            return 'stopped';
          }
          progress(done, request.total, 'chunks');
        }
        return request.total;
      case 'spin':
        Atomics.store(request.seen, 0, 1);
        while (!signal.aborted) Atomics.load(request.seen, 0);
        Atomics.store(request.seen, 1, 1);
        return 'stopped';
      case 'mark':
        Atomics.store(request.seen, 0, 1);
        return 'marked';
      case 'fail':
        throw new KnobError('INVALID_INPUT', 'the request was refused');
      case 'handBack':
        kept = request.buffer;
        return { buffer: request.buffer };
      case 'keptLength':
        return kept?.byteLength ?? null;
      case 'exit':
        process.exit(3);
    }
  },
  {
    concurrent: (workerData as { concurrent?: boolean }).concurrent === true,
    transferOf: (result) => {
      const buffer = (result as { buffer?: unknown } | null)?.buffer;
      return buffer instanceof ArrayBuffer ? [buffer] : [];
    },
  },
);
