/**
 * The batch chosen from the model's input size (src-main/core/inference/batch-size.ts): as many
 * frames as fit the budget at 40 times the input tensor's bytes a frame, between 1 and 256.
 */
import { describe, expect, it } from 'vitest';
import {
  ACTIVATIONS_PER_INPUT,
  BATCH_MEMORY_BUDGET_BYTES,
  batchFramesFor,
  MAX_AUTO_BATCH_FRAMES,
} from '../../src-main/core/inference/batch-size';

describe('the batch chosen from the input size', () => {
  it('is the budget over 40 times the input tensor, within [1, 256]', () => {
    expect(batchFramesFor({ width: 28, height: 28, channels: 1 }).frames).toBe(MAX_AUTO_BATCH_FRAMES);
    const imagenet = batchFramesFor({ width: 224, height: 224, channels: 3 });
    expect(imagenet.frames).toBe(Math.floor(BATCH_MEMORY_BUDGET_BYTES / (224 * 224 * 3 * 4 * ACTIVATIONS_PER_INPUT)));
    expect(imagenet.frames).toBe(22);
    expect(imagenet.reason).toMatch(/^22 frames a batch: 224x224x3 input, about 23 MiB a frame/);
    // a huge input still gets one frame a batch
    expect(batchFramesFor({ width: 4096, height: 4096, channels: 3 }).frames).toBe(1);
  });
});
