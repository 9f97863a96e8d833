import { toErrorPayload } from '../../../src-shared/errors';
import { loadModel, type LoadedModel } from './loaded-model';
import type { FromInferenceProcess, ToInferenceProcess } from './inference-protocol';

/**
 * Entry point of the inference process (ARCHITECTURE.md: inference never blocks the caller's event
 * loop, and a crashing model cannot take the app down). It owns the onnxruntime sessions; the
 * engine in the parent keeps every bit of stream state, so a restart loses nothing but the frame
 * in flight. Results come back in the order requests arrived.
 */
let model: LoadedModel | null = null;
let queue: Promise<void> = Promise.resolve();

function send(message: FromInferenceProcess): void {
  process.send?.(message);
}

async function handle(message: ToInferenceProcess): Promise<void> {
  switch (message.type) {
    case 'load':
      try {
        await model?.close();
        model = await loadModel(message.options);
        send({ type: 'loaded', description: model.description });
      } catch (error) {
        send({ type: 'load-failed', error: toErrorPayload(error) });
      }
      return;
    case 'run':
      try {
        if (model === null) throw new Error('no model is loaded');
        const out = await model.run(message.frames, message.count, message.firstFrame);
        send({ type: 'result', id: message.id, ...out });
      } catch (error) {
        send({ type: 'run-failed', id: message.id, error: toErrorPayload(error) });
      }
      return;
    case 'crash':
      process.exit(70);
  }
}

process.on('message', (message: ToInferenceProcess) => {
  // Loads are ordered; runs start at once (the model preprocesses on arrival and serialises
  // inference itself), so the next batch's preparation overlaps the current one's inference.
  if (message.type === 'run') void handle(message);
  else queue = queue.then(() => handle(message));
});
// The parent going away (crash, kill) must not leave this process behind.
process.on('disconnect', () => process.exit(0));
