import type { Worker } from 'node:worker_threads';
import type { ModelDescription, ModelOptions } from '../../../src-shared/api/model-options';
import { toErrorPayload } from '../../../src-shared/errors';
import { startEntryWorker } from '../workers/entry-worker';
import { cpuSessionLayout } from './session-layout';
import { parentChannel } from './parent-channel';
import type { FromInferenceProcess, FromInferenceWorker, ToInferenceWorker } from './inference-protocol';

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
 * Other providers get one session. Results go back as each finishes; the engine matches them by id.
 *
 * The engine in the parent keeps every bit of stream state, so a restart loses nothing but the frames
 * in flight.
 */
const { sessions: SESSIONS_ON_CPU, threadsPerSession: THREADS_PER_SESSION } = cpuSessionLayout();

interface Session {
  worker: Worker;
  busy: boolean;
}

let sessions: Session[] = [];
let loaded = false;
const waiting: Array<Extract<ToInferenceWorker, { type: 'run' }>> = [];
let loadGeneration = 0;

const parent = parentChannel();

function send(message: FromInferenceProcess): void {
  parent.send(message);
}

function dispatch(): void {
  for (const session of sessions) {
    if (waiting.length === 0) return;
    if (session.busy) continue;
    const request = waiting.shift()!;
    session.busy = true;
    session.worker.postMessage(request);
  }
}

/** A worker that fails outside a request leaves a session missing: exit, and the parent restarts us. */
function startSession(
  onLoaded: (message: Extract<FromInferenceWorker, { type: 'loaded' | 'load-failed' }>) => void,
): Session {
  const worker = startEntryWorker(import.meta.url, 'inference-worker');
  const session: Session = { worker, busy: true };
  worker.on('message', (message: FromInferenceWorker) => {
    switch (message.type) {
      case 'loaded':
      case 'load-failed':
        session.busy = false;
        onLoaded(message);
        return;
      case 'result':
      case 'run-failed':
        session.busy = false;
        send(message);
    }
    dispatch();
  });
  worker.on('error', () => process.exit(70));
  worker.on('exit', () => {
    if (sessions.includes(session)) process.exit(70);
  });
  return session;
}

function load(options: ModelOptions): void {
  const generation = ++loadGeneration;
  const previous = sessions;
  sessions = [];
  loaded = false;
  for (const session of previous) void session.worker.terminate();
  const first = startSession((message) => {
    if (generation !== loadGeneration) return;
    if (message.type === 'load-failed') return send(message);
    addCpuSessions(message.description, options, generation);
  });
  sessions.push(first);
  first.worker.postMessage({ type: 'load', options, intraOpThreads: THREADS_PER_SESSION } satisfies ToInferenceWorker);
}

/** On the CPU, the other sessions load the same model before the process reports it loaded. */
function addCpuSessions(description: ModelDescription, options: ModelOptions, generation: number): void {
  const ready = (): void => {
    loaded = true;
    send({ type: 'loaded', description });
  };
  const extra = description.executionProvider === 'cpu' ? SESSIONS_ON_CPU - 1 : 0;
  if (extra === 0) return ready();
  let pending = extra;
  for (let i = 0; i < extra; i++) {
    const session = startSession((message) => {
      if (generation !== loadGeneration) return;
      // It loaded once already; should a copy fail, the process carries on with the sessions it has.
      if (message.type === 'load-failed') {
        sessions = sessions.filter((s) => s !== session);
        void session.worker.terminate();
      }
      if (--pending === 0) ready();
    });
    sessions.push(session);
    session.worker.postMessage({
      type: 'load',
      options: { ...options, executionProviders: ['cpu'] },
      intraOpThreads: THREADS_PER_SESSION,
    } satisfies ToInferenceWorker);
  }
}

parent.onMessage((message) => {
  switch (message.type) {
    case 'load':
      load(message.options);
      return;
    case 'run':
      if (!loaded) {
        send({ type: 'run-failed', id: message.id, error: toErrorPayload(new Error('no model is loaded')) });
        return;
      }
      waiting.push(message);
      dispatch();
      return;
    case 'crash':
      process.exit(70);
  }
});
// The parent going away (crash, kill) must not leave this process behind.
process.on('disconnect', () => process.exit(0));
