import { checkScheduleForChannels, type CorruptionSchedule } from '../../../src-shared/corruptions';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { checkKeptClassCount } from '../../../src-shared/trace/kept-classes';
import type { CallContext } from '../calls/call-context';
import { runOffline, type OfflineRunResult } from '../engine/offline-run';
import { batchFramesFor } from '../inference/batch-size';
import type { InferenceClient } from '../inference/inference-client';
import type { FrameSource } from '../sources/frame-source';

export interface RunOfflineInput {
  model: InferenceClient;
  source: FrameSource;
  schedule: CorruptionSchedule;
  /** The corruption stream's seed. */
  streamSeed: number;
  settings: GateSettings;
  /** Frames a batch; default: as many as the model's input size allows (batch-size.ts). */
  batchSize?: number;
  maxFrames?: number;
  /** Keep the model's `features` output in the trace (the model must have one). */
  recordFeatures: boolean;
  /** Record this many classes a frame (a kept-class trace, kept-classes.ts); default every class. */
  keepClasses?: number;
}

/**
 * A file source through the model at full speed (offline-run.ts), the desk's stream.runOffline and
 * `knob run` alike: the schedule is checked against the model's input channels before the first
 * batch, progress is reported as `offline run of <source>`, and cancelling the call stops the run
 * between batches; the frames computed before a stop or a failure are in the result, with the
 * error. `keepClasses` is checked against the model's classes before the first batch.
 */
export async function runSourceOffline(input: RunOfflineInput, call: CallContext): Promise<OfflineRunResult> {
  const { model, source } = input;
  checkScheduleForChannels(input.schedule, model.description.input.channels);
  if (input.keepClasses !== undefined) checkKeptClassCount(input.keepClasses, model.description.classCount);
  const task = `offline run of ${source.info.description}`;
  return runOffline({
    client: model,
    source,
    schedule: input.schedule,
    streamSeed: input.streamSeed,
    settings: input.settings,
    batchSize: input.batchSize ?? batchFramesFor(model.description.input).frames,
    maxFrames: input.maxFrames,
    recordFeatures: input.recordFeatures,
    keepClasses: input.keepClasses,
    signal: call.signal,
    onProgress: (done, total) => call.progress(task, done, total),
  });
}
