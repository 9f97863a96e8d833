import { expNonPositive } from './exp-non-positive';
import type { LogitArray } from './logits';

/**
 * Convex fusion (ARCHITECTURE.md): z_fuse = (1 - g) z_static + g z_dyn with g clamped to [0, 1]
 * at this readout only (the gate state itself is never clipped).
 */
export function clampGate(g: number): number {
  return g < 0 ? 0 : g > 1 ? 1 : g;
}

export function fuseRowInto(
  zStatic: LogitArray,
  zDyn: LogitArray,
  offset: number,
  classCount: number,
  g: number,
  out: Float64Array,
  outOffset: number,
): void {
  const gate = clampGate(g);
  const keep = 1 - gate;
  for (let k = 0; k < classCount; k++) out[outOffset + k] = keep * zStatic[offset + k] + gate * zDyn[offset + k];
}

/**
 * The replay's fast path: fuses frames [from, to) and writes each frame's top-1 class and its
 * softmax probability 1 / sum_k exp(z_k - max z) (ties go to the lowest index), in one pass per row.
 * Same arithmetic as fuseRowInto (tested bit for bit). Fused logits go to `fused` (row-major)
 * when given, else through `scratch` (K values). `confidence` null: the top-1 alone, no exp at all
 * (a caller that scores the fused rows next gets the same 1 / sum from its softmax pass).
 */
export function fuseTop1Into(
  zStatic: LogitArray,
  zDyn: LogitArray,
  g: Float64Array,
  classCount: number,
  from: number,
  to: number,
  top1: Int32Array,
  confidence: Float64Array | null,
  fused: Float64Array | null,
  scratch: Float64Array,
): void {
  const target = fused ?? scratch;
  for (let i = from; i < to; i++) {
    const offset = i * classCount;
    const targetOffset = fused === null ? 0 : offset;
    const gi = g[i];
    const gate = gi < 0 ? 0 : gi > 1 ? 1 : gi;
    const keep = 1 - gate;
    let max = -Infinity;
    let best = 0;
    for (let k = 0; k < classCount; k++) {
      const z = keep * zStatic[offset + k] + gate * zDyn[offset + k];
      target[targetOffset + k] = z;
      if (z > max) {
        max = z;
        best = k;
      }
    }
    top1[i] = best;
    if (confidence === null) continue;
    let sum = 0;
    for (let k = 0; k < classCount; k++) sum += expNonPositive(target[targetOffset + k] - max);
    confidence[i] = 1 / sum;
  }
}
