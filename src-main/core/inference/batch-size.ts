import type { InputSpec } from '../../../src-shared/frames/input-spec';

/**
 * How many frames go to the model at once when the caller does not say (issue 29): as many as fit
 * a memory budget for the batch in the inference process, at most MAX_AUTO_BATCH_FRAMES. A frame
 * costs its input tensor (C x H x W float32) and the activations the network computes from it,
 * taken as ACTIVATIONS_PER_INPUT times the input: issue 29 measured a MobileNet-like
 * 224 x 224 x 3 network's inference process at 6.3 GB with 256 frames a batch, about 24 MB a frame
 * in onnxruntime's CPU arena, 40 times its 0.6 MB input. So the shipped 28 x 28 model runs 256
 * frames a batch and a 224 x 224 x 3 one 22, about half a gigabyte.
 */
export const BATCH_MEMORY_BUDGET_BYTES = 512 * 2 ** 20;
export const ACTIVATIONS_PER_INPUT = 40;
export const MAX_AUTO_BATCH_FRAMES = 256;

export interface BatchChoice {
  frames: number;
  /** How it was chosen, in words (the CLI prints it). */
  reason: string;
}

export function batchFramesFor(input: Pick<InputSpec, 'width' | 'height' | 'channels'>): BatchChoice {
  const inputBytes = input.width * input.height * input.channels * 4;
  const perFrame = inputBytes * ACTIVATIONS_PER_INPUT;
  const frames = Math.max(1, Math.min(MAX_AUTO_BATCH_FRAMES, Math.floor(BATCH_MEMORY_BUDGET_BYTES / perFrame)));
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(bytes < 2 ** 20 ? 2 : 0)} MiB`;
  return {
    frames,
    reason: `${frames} frames a batch: ${input.width}x${input.height}x${input.channels} input, about ${mb(perFrame)} a frame with its activations, within ${mb(BATCH_MEMORY_BUDGET_BYTES)}${frames === MAX_AUTO_BATCH_FRAMES ? ` (at most ${MAX_AUTO_BATCH_FRAMES})` : ''}`,
  };
}
