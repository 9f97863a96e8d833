import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { CallContext } from '../calls/call-context';
import { runOffline, type OfflineRunResult } from '../engine/offline-run';
import type { InferenceClient } from '../inference/inference-client';
import type { OpenedSource } from './session-states';

/** Frames per batch of the desk's offline run. */
const OFFLINE_BATCH_FRAMES = 256;

/**
 * The open file source through the model at full speed (offline-run.ts), for the offline-run
 * state: stopped by the state's controller, which the call's cancellation aborts too; the frames
 * computed before a stop are in the result. The source's features are kept when it records them.
 */
export async function runOpenSourceOffline(
  model: InferenceClient,
  source: OpenedSource,
  settings: GateSettings,
  maxFrames: number | undefined,
  call: CallContext,
  controller: AbortController,
): Promise<OfflineRunResult> {
  const abort = (): void => controller.abort();
  call.signal.addEventListener('abort', abort, { once: true });
  if (call.signal.aborted) abort();
  const frames = source.frames!;
  const task = `offline run of ${frames.info.description}`;
  try {
    return await runOffline({
      client: model,
      source: frames,
      schedule: source.schedule,
      streamSeed: source.seed,
      settings,
      batchSize: OFFLINE_BATCH_FRAMES,
      maxFrames,
      recordFeatures: source.featureWidth !== null,
      signal: controller.signal,
      onProgress: (done, total) => call.progress(task, done, total),
    });
  } finally {
    call.signal.removeEventListener('abort', abort);
  }
}
