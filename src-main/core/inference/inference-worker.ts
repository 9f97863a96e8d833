import { serve } from '../workers/worker-serve';
import { loadModel, type LoadedModel } from './loaded-model';
import type { InferenceResult, InferenceWorkerRequest } from './inference-protocol';

/**
 * A thread that owns an onnxruntime session, inside the inference process. onnxruntime-node runs a
 * session synchronously on its calling thread; running it here leaves the process's main thread
 * free to receive the next batches while this one computes. Each batch is preprocessed here, just
 * before its run: on a thread that would otherwise wait for it, rather than on one more thread
 * competing with the sessions for the cores. Requests are handled strictly in arrival order
 * (serve's default), each answered under its id (worker-protocol.ts).
 */
let model: LoadedModel | null = null;

serve<InferenceWorkerRequest, InferenceResult>(async (request) => {
  if (request.kind === 'load') {
    await model?.close();
    model = null;
    model = await loadModel(request.options, request.intraOpThreads);
    return model.description;
  }
  if (model === null) throw new Error('no model is loaded');
  return model.run(request.frames, request.count, request.firstFrame, request.keepFeatures);
});
