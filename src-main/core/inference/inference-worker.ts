import { parentPort } from 'node:worker_threads';
import { toErrorPayload } from '../../../src-shared/errors';
import { loadModel, type LoadedModel } from './loaded-model';
import type { FromInferenceWorker, ToInferenceWorker } from './inference-protocol';

/**
 * The thread that owns the onnxruntime sessions, inside the inference process. onnxruntime-node
 * runs a session synchronously on its calling thread; running it here leaves the process's main
 * thread free to receive and preprocess the next batches while this one computes, instead of
 * adding that work between runs. Messages are handled strictly in arrival order.
 */
let model: LoadedModel | null = null;
let queue: Promise<void> = Promise.resolve();

function post(message: FromInferenceWorker, transfer: ArrayBuffer[] = []): void {
  parentPort?.postMessage(message, transfer);
}

async function handle(message: ToInferenceWorker): Promise<void> {
  if (message.type === 'load') {
    try {
      await model?.close();
      model = null;
      model = await loadModel(message.options, message.intraOpThreads);
      post({ type: 'loaded', description: model.description });
    } catch (error) {
      post({ type: 'load-failed', error: toErrorPayload(error) });
    }
    return;
  }
  const { id, data, count, firstFrame } = message;
  try {
    if (model === null) throw new Error('no model is loaded');
    const out = await model.infer(data, count, firstFrame);
    post({ type: 'inferred', id, data, ...out }, [data.buffer as ArrayBuffer]);
  } catch (error) {
    post({ type: 'infer-failed', id, data, error: toErrorPayload(error) }, [data.buffer as ArrayBuffer]);
  }
}

parentPort?.on('message', (message: ToInferenceWorker) => {
  queue = queue.then(() => handle(message));
});
