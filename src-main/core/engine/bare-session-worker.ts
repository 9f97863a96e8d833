import * as ort from 'onnxruntime-node';
import { parentPort } from 'node:worker_threads';
import type { ExecutionProviderName } from '../../../src-shared/api/model-options';
import { toErrorPayload } from '../../../src-shared/errors';
import { createSessionOnFirstProvider } from '../inference/execution-providers';

/**
 * One bare onnxruntime session on its own thread, for the bench's like-for-like measurement of the
 * engine's session layout (a session runs synchronously on its calling thread, so sessions that are
 * to run at once need a thread each). It runs ready float tensors, nothing else.
 */
export type ToBareSession =
  | {
      type: 'open';
      modelBytes: Uint8Array;
      source: string;
      provider: ExecutionProviderName;
      intraOpThreads: number;
      shape: number[];
      tensors: Float32Array[];
    }
  | { type: 'run'; batches: number; first: number };
export type FromBareSession =
  { type: 'opened' } | { type: 'ran' } | { type: 'failed'; error: ReturnType<typeof toErrorPayload> };

let session: ort.InferenceSession | null = null;
let feeds: ort.InferenceSession.FeedsType[] = [];

parentPort?.on('message', (message: ToBareSession) => {
  void (async () => {
    try {
      if (message.type === 'open') {
        session = (
          await createSessionOnFirstProvider(
            message.modelBytes,
            message.source,
            [message.provider],
            message.intraOpThreads,
          )
        ).session;
        feeds = message.tensors.map((data) => ({
          [session!.inputNames[0]!]: new ort.Tensor('float32', data, message.shape),
        }));
        for (const feed of feeds.slice(0, 2)) await session.run(feed);
        parentPort?.postMessage({ type: 'opened' } satisfies FromBareSession);
        return;
      }
      for (let i = 0; i < message.batches; i++) await session!.run(feeds[(message.first + i) % feeds.length]!);
      parentPort?.postMessage({ type: 'ran' } satisfies FromBareSession);
    } catch (error) {
      parentPort?.postMessage({ type: 'failed', error: toErrorPayload(error) } satisfies FromBareSession);
    }
  })();
});
