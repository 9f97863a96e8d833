/**
 * The knob sweep (knob-sweep.ts) on a worker thread: it reports the name of each call before making
 * it, so when the test's bounded wait runs out it can name the call that did not return.
 */
import { parentPort } from 'node:worker_threads';
import { sweepKnobComputations } from './knob-sweep';

const port = parentPort!;
sweepKnobComputations({ started: (name) => port.postMessage({ kind: 'started', name }) }).then(
  (summary) => port.postMessage({ kind: 'done', summary }),
  (error: unknown) =>
    port.postMessage({ kind: 'failed', message: error instanceof Error ? error.message : String(error) }),
);
