/**
 * The crash reason of the inference process (src-main/core/inference/inference-launcher.ts): what it
 * wrote to stderr before its first answer is start-up chatter and is dropped then, but its `ready`
 * (worker-protocol.ts), posted before the load even starts, is no answer and drops nothing.
 */
import { describe, expect, it } from 'vitest';
import { StderrTail } from '../../src-main/core/inference/inference-launcher';

describe("the inference process's stderr tail", () => {
  it('keeps what was written until the first answer, not until the process said it serves', () => {
    const tail = new StderrTail();
    tail.add('probing the CUDA provider\n');
    tail.replied({ ready: true });
    expect(tail.reason('inference process exited (code 1)')).toBe(
      'inference process exited (code 1): probing the CUDA provider',
    );
    tail.replied({ id: 1, result: { kind: 'loaded' } as never });
    expect(tail.reason('inference process exited (SIGKILL)')).toBe('inference process exited (SIGKILL)');
    tail.add('Segmentation fault\n');
    tail.replied({ id: 2, result: { kind: 'ran' } as never });
    expect(tail.reason('inference process exited (code 139)')).toBe(
      'inference process exited (code 139): Segmentation fault',
    );
  });
});
