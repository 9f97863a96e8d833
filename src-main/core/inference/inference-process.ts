import type { ModelDescription, ModelOptions } from '../../../src-shared/api/model-options';
import type { CancelSignal } from '../../../src-shared/cancel-signal';
import { cancelledError } from '../../../src-shared/errors';
import { startEntryWorker } from '../workers/entry-worker';
import { ThreadChannel } from '../workers/worker-channel';
import { serve } from '../workers/worker-serve';
import { cpuSessionLayout } from './session-layout';
import { parentChannel } from './parent-channel';
import type { BranchOutputs } from './loaded-model';
import type { InferenceRequest, InferenceResult, InferenceWorkerRequest } from './inference-protocol';

/**
 * Entry point of the inference process (ARCHITECTURE.md: inference never blocks the caller's event
 * loop, and a crashing model cannot take the app down). Its main thread receives batches and hands
 * each to an idle session; worker threads own the onnxruntime sessions (inference-worker.ts),
 * because onnxruntime-node runs a session synchronously on its calling thread: receiving the next
 * batches then overlaps inference instead of adding to it.
 *
 * On the CPU provider the cores are shared by batches rather than inside one (session-layout.ts):
 * several sessions (workers), each with its share of the cores as intra-op threads, run different
 * batches at once. Threads on separate batches never wait for each other, so a core briefly taken by
 * the engine's own work slows one batch instead of stalling a parallel section of every operator
 * (measured on the 2-core build machine: two one-thread sessions ran the default model 2-11 % faster
 * than one two-thread session, bare). The cost is one copy of the model per session in memory.
 * Other providers get one session. Results go back as each finishes, under the engine's request
 * ids (worker-protocol.ts); a batch the engine cancels while it still waits here is never run.
 *
 * The engine in the parent keeps every bit of stream state, so a restart loses nothing but the frames
 * in flight.
 */
const { sessions: SESSIONS_ON_CPU, threadsPerSession: THREADS_PER_SESSION } = cpuSessionLayout();

interface Session {
  thread: ThreadChannel<InferenceWorkerRequest, InferenceResult>;
  busy: boolean;
}

interface WaitingRun {
  request: Extract<InferenceRequest, { kind: 'run' }>;
  signal: CancelSignal;
  resolve: (outputs: BranchOutputs) => void;
  reject: (error: unknown) => void;
}

let sessions: Session[] = [];
let loaded = false;
let waiting: WaitingRun[] = [];
let loadGeneration = 0;

function dispatch(): void {
  for (const session of sessions) {
    if (waiting.length === 0) return;
    if (session.busy) continue;
    const run = waiting.shift()!;
    session.busy = true;
    // a batch handed to a session runs to its end (onnxruntime cannot be interrupted); one the
    // engine cancelled meanwhile is answered to no one (serve drops it)
    void (session.thread.call(run.request) as Promise<BranchOutputs>).then(run.resolve, run.reject).finally(() => {
      session.busy = false;
      dispatch();
    });
  }
}

/** A worker that fails leaves a session missing: exit, and the parent restarts us. */
function startSession(): Session {
  const worker = startEntryWorker(import.meta.url, 'inference-worker');
  const session: Session = { thread: new ThreadChannel(worker, 'an inference session thread'), busy: true };
  worker.on('error', () => process.exit(70));
  worker.on('exit', () => {
    if (sessions.includes(session)) process.exit(70);
  });
  return session;
}

function loadSession(session: Session, options: ModelOptions): Promise<ModelDescription> {
  return session.thread
    .call({ kind: 'load', options, intraOpThreads: THREADS_PER_SESSION })
    .finally(() => (session.busy = false)) as Promise<ModelDescription>;
}

/** Answers the model's description once every session has loaded it, or the first one's error. */
async function load(options: ModelOptions): Promise<ModelDescription> {
  const generation = ++loadGeneration;
  const previous = sessions;
  sessions = [];
  loaded = false;
  for (const session of previous) void session.thread.close();
  const first = startSession();
  sessions.push(first);
  const description = await loadSession(first, options);
  await addCpuSessions(description, options, generation);
  // a later load replaced this one's sessions (the engine sends one load per process)
  if (generation !== loadGeneration) throw new Error('a later load replaced this one');
  loaded = true;
  dispatch();
  return { ...description, concurrentRuns: sessions.length };
}

/** On the CPU, the other sessions load the same model before the process reports it loaded. */
async function addCpuSessions(description: ModelDescription, options: ModelOptions, generation: number): Promise<void> {
  const extra = generation === loadGeneration && description.executionProvider === 'cpu' ? SESSIONS_ON_CPU - 1 : 0;
  const copies = Array.from({ length: extra }, () => startSession());
  sessions.push(...copies);
  await Promise.all(
    copies.map((session) =>
      loadSession(session, { ...options, executionProviders: ['cpu'] }).catch(() => {
        if (generation !== loadGeneration) return;
        // It loaded once already; should a copy fail, the process carries on with the sessions it has.
        sessions = sessions.filter((s) => s !== session);
        void session.thread.close();
      }),
    ),
  );
}

function run(request: Extract<InferenceRequest, { kind: 'run' }>, signal: CancelSignal): Promise<BranchOutputs> {
  if (!loaded) throw new Error('no model is loaded');
  return new Promise<BranchOutputs>((resolve, reject) => {
    const entry: WaitingRun = { request, signal, resolve, reject };
    signal.addEventListener(
      'abort',
      () => {
        if (!waiting.includes(entry)) return;
        waiting = waiting.filter((other) => other !== entry);
        reject(cancelledError(`inference of frames from ${request.firstFrame}`));
      },
      { once: true },
    );
    waiting.push(entry);
    dispatch();
  });
}

// several batches are in flight at once: each request is taken as it arrives
serve<InferenceRequest, InferenceResult>(
  (request, { signal }) => {
    switch (request.kind) {
      case 'load':
        return load(request.options);
      case 'run':
        return run(request, signal);
      case 'crash':
        process.exit(70);
    }
  },
  { port: parentChannel(), concurrent: true },
);
// The parent going away (crash, kill) must not leave this process behind.
process.on('disconnect', () => process.exit(0));
