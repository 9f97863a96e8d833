import { KnobError } from '../errors';
import { softmaxRowInto, type LogitArray } from './logits';

/**
 * Gate targets u*(x) for models that do not predict one (ARCHITECTURE.md, "Models the app accepts").
 * u* is the weight of the sensitive (dynamic) branch, so it must fall when the input looks shifted:
 *  - `entropy`: u* = 1 - H(p) / ln K, p = softmax(z) (1 for a one-hot prediction, 0 for uniform);
 *  - `margin`:  u* = p_(1) - p_(2), the gap between the two largest softmax probabilities;
 *  - two branches: u* = 1 - TV(p_a, p_b), TV = 1/2 sum_k |p_a,k - p_b,k| the total-variation
 *    distance, 1 when the branches agree exactly and 0 when their supports are disjoint.
 * All three lie in [0, 1] by construction. Rows are row-major (frame i at [i K, (i + 1) K)).
 */
export const CERTAINTY_RULES = ['entropy', 'margin'] as const;
export type CertaintyRule = (typeof CERTAINTY_RULES)[number];

/** softmaxRowInto after refusing a row it cannot take: NaN anywhere, or no finite maximum. */
function softmaxInto(z: LogitArray, offset: number, k: number, out: Float64Array): void {
  let max = -Infinity;
  for (let c = 0; c < k; c++) {
    const value = z[offset + c];
    if (value !== value) throw new KnobError('INVALID_INPUT', `logits of frame ${offset / k} contain NaN`);
    if (value > max) max = value;
  }
  if (!Number.isFinite(max))
    throw new KnobError('INVALID_INPUT', `logits of frame ${offset / k} are not finite (max ${max})`);
  softmaxRowInto(z, offset, k, out, 0);
}

/** u* from one classifier's own certainty, for frames [0, n). `scratch` holds K values. */
export function certaintyGateTargetInto(
  z: LogitArray,
  n: number,
  k: number,
  rule: CertaintyRule,
  out: Float32Array | Float64Array,
  scratch: Float64Array,
): void {
  const logK = Math.log(k);
  for (let i = 0; i < n; i++) {
    softmaxInto(z, i * k, k, scratch);
    if (rule === 'entropy') {
      let entropy = 0;
      for (let c = 0; c < k; c++) {
        const p = scratch[c];
        if (p > 0) entropy -= p * Math.log(p);
      }
      out[i] = k < 2 ? 1 : Math.min(1, Math.max(0, 1 - entropy / logK));
    } else {
      let first = 0;
      let second = 0;
      for (let c = 0; c < k; c++) {
        const p = scratch[c];
        if (p > first) {
          second = first;
          first = p;
        } else if (p > second) second = p;
      }
      out[i] = first - second;
    }
  }
}

/** u* = 1 - TV(softmax(a), softmax(b)) per frame. `scratch` holds 2 K values. */
export function agreementGateTargetInto(
  a: LogitArray,
  b: LogitArray,
  n: number,
  k: number,
  out: Float32Array | Float64Array,
  scratch: Float64Array,
): void {
  const pa = scratch.subarray(0, k);
  const pb = scratch.subarray(k, 2 * k);
  for (let i = 0; i < n; i++) {
    softmaxInto(a, i * k, k, pa);
    softmaxInto(b, i * k, k, pb);
    let tv = 0;
    for (let c = 0; c < k; c++) tv += Math.abs(pa[c] - pb[c]);
    out[i] = Math.min(1, Math.max(0, 1 - tv / 2));
  }
}

/** The adapter's conservative branch: z_static = z / T0 with T0 >= 1 (a softened copy of z). */
export function temperedLogitsInto(z: LogitArray, length: number, t0: number, out: Float32Array): void {
  if (!(t0 >= 1 && t0 < Infinity))
    throw new KnobError('INVALID_SETTINGS', `T0 must be finite and at least 1, got ${t0}`);
  const inv = 1 / t0;
  for (let i = 0; i < length; i++) out[i] = z[i] * inv;
}
