import type { CheckFrames } from '../../src-main/core/deploy/step-graph-check';
import { openSourcePath } from '../../src-main/core/sources/open-source';
import type { InputSpec } from '../../src-shared/frames/input-spec';
import { createFramePreparer } from '../../src-shared/frames/prepare-frames';
import { allocateBatchMetadata } from '../../src-shared/trace/trace-builder';

/** The embedded stream, fitted to the model's input, clean for 120 frames then shot noise 5. */
export async function embeddedStepStream(
  input: InputSpec,
  irregular: boolean,
  frameCount = 240,
): Promise<CheckFrames & { labels: Int32Array }> {
  const source = await openSourcePath('default', { target: input, labelNames: null });
  const target = { width: input.width, height: input.height, channels: input.channels };
  const schedule = {
    kind: 'step' as const,
    corruption: 'shot_noise' as const,
    levels: [
      { atFrame: 0, severity: 0 },
      { atFrame: frameCount / 2, severity: 5 },
    ],
  };
  const preparer = createFramePreparer(target, schedule, 7);
  const frameBytes = input.width * input.height * input.channels;
  const frames = new Uint8Array(frameCount * frameBytes);
  const labels = new Int32Array(frameCount);
  for await (const batch of source.batches(frameCount)) {
    preparer.prepare(batch.frames, source.info, frameCount, 0, batch.first, frames, allocateBatchMetadata(frameCount));
    labels.set(batch.labels!);
    break;
  }
  const nominalDtSeconds = 1 / source.info.frameRateHz;
  // irregular: intervals between 0.4 and 2.5 nominal ones (a dropped-frame camera)
  const timestampsSeconds = new Float64Array(frameCount);
  for (let i = 1; i < frameCount; i++)
    timestampsSeconds[i] =
      timestampsSeconds[i - 1]! + (irregular ? nominalDtSeconds * (0.4 + ((i * 7919) % 23) / 10.5) : nominalDtSeconds);
  return { frames, count: frameCount, timestampsSeconds, nominalDtSeconds, labels };
}
