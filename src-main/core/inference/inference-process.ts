import { toErrorPayload } from '../../../src-shared/errors';
import { startEntryWorker } from '../workers/entry-worker';
import { BatchTensors } from './batch-tensors';
import type { FromInferenceProcess, FromInferenceWorker, ToInferenceProcess, ToInferenceWorker } from './inference-protocol';

/**
 * Entry point of the inference process (ARCHITECTURE.md: inference never blocks the caller's event
 * loop, and a crashing model cannot take the app down). Its main thread receives batches and
 * preprocesses them; a worker thread owns the onnxruntime sessions (inference-worker.ts), so
 * receiving and preprocessing the next batches overlap the current one's inference rather than
 * adding to it. The engine in the parent keeps every bit of stream state, so a restart loses
 * nothing but the frames in flight. Results come back in the order requests arrived.
 */
let tensors: BatchTensors | null = null;
const preprocessMsById = new Map<number, number>();

function send(message: FromInferenceProcess): void {
  process.send?.(message);
}

const worker = startEntryWorker(import.meta.url, 'inference-worker');
function toWorker(message: ToInferenceWorker, transfer: ArrayBuffer[] = []): void {
  worker.postMessage(message, transfer);
}

worker.on('message', (message: FromInferenceWorker) => {
  switch (message.type) {
    case 'loaded':
      tensors = new BatchTensors(message.description.input);
      send(message);
      return;
    case 'load-failed':
      tensors = null;
      send(message);
      return;
    case 'inferred': {
      const { id, data, ...outputs } = message;
      tensors?.release(data);
      send({ ...outputs, type: 'result', id, preprocessMs: preprocessMsById.get(id) ?? 0 });
      preprocessMsById.delete(id);
      return;
    }
    case 'infer-failed':
      tensors?.release(message.data);
      preprocessMsById.delete(message.id);
      send({ type: 'run-failed', id: message.id, error: message.error });
  }
});
// A worker that fails outside a request leaves no sessions: exit, and the parent restarts us.
worker.on('error', () => process.exit(70));
worker.on('exit', () => process.exit(70));

process.on('message', (message: ToInferenceProcess) => {
  switch (message.type) {
    case 'load':
      toWorker(message);
      return;
    case 'run':
      try {
        if (tensors === null) throw new Error('no model is loaded');
        const started = performance.now();
        const data = tensors.prepare(message.frames, message.count);
        preprocessMsById.set(message.id, performance.now() - started);
        toWorker({ type: 'infer', id: message.id, data, count: message.count, firstFrame: message.firstFrame }, [data.buffer as ArrayBuffer]);
      } catch (error) {
        send({ type: 'run-failed', id: message.id, error: toErrorPayload(error) });
      }
      return;
    case 'crash':
      process.exit(70);
  }
});
// The parent going away (crash, kill) must not leave this process behind.
process.on('disconnect', () => process.exit(0));
