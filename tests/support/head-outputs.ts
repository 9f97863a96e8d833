import type * as ort from 'onnxruntime-node';
import { expect } from 'vitest';
import type { BranchRows } from '../../src-shared/heads/knob-heads';

/**
 * A Knob model's outputs from onnxruntime (z_static, z_dyn, u_ref) against the app's on the same
 * rows (knobHeadOutputs), each to float32's rounding: relative to 1 + |value|, within 1e-6.
 */
export function expectOutputsOfHeads(result: ort.InferenceSession.ReturnType, expected: BranchRows): void {
  const worst = (got: ort.Tensor, want: ArrayLike<number>) =>
    Array.from(got.data as Float32Array).reduce(
      (w, v, i) => Math.max(w, Math.abs(v - want[i]!) / (1 + Math.abs(want[i]!))),
      0,
    );
  expect(worst(result.z_static!, expected.zStatic), 'z_static').toBeLessThan(1e-6);
  expect(worst(result.z_dyn!, expected.zDyn), 'z_dyn').toBeLessThan(1e-6);
  expect(worst(result.u_ref!, expected.u), 'u_ref').toBeLessThan(1e-6);
}
