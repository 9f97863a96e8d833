import { parentPort } from 'node:worker_threads';
import { toErrorPayload } from '../../../src-shared/errors';
import { loadModel, type LoadedModel } from './loaded-model';
import type { FromInferenceWorker, ToInferenceWorker } from './inference-protocol';

/**
 * A thread that owns an onnxruntime session, inside the inference process. onnxruntime-node runs a
 * session synchronously on its calling thread; running it here leaves the process's main thread
 * free to receive the next batches while this one computes. Each batch is preprocessed here, just
 * before its run: on a thread that would otherwise wait for it, rather than on one more thread
 * competing with the sessions for the cores. Messages are handled strictly in arrival order.
 */
let model: LoadedModel | null = null;
let queue: Promise<void> = Promise.resolve();

function post(message: FromInferenceWorker): void {
  parentPort?.postMessage(message);
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
  try {
    if (model === null) throw new Error('no model is loaded');
    post({
      type: 'result',
      id: message.id,
      ...(await model.run(message.frames, message.count, message.firstFrame, message.keepFeatures)),
    });
  } catch (error) {
    post({ type: 'run-failed', id: message.id, error: toErrorPayload(error) });
  }
}

parentPort?.on('message', (message: ToInferenceWorker) => {
  queue = queue.then(() => handle(message));
});
