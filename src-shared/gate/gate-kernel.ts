import { KnobError } from '../errors';
import type { GateSettings } from './gate-settings';
import { C_BLEND, C_P11, C_P12, C_P21, C_P22, resetCoefficientsInto, stepCoefficientsInto } from './step-coefficients';
import { S_CLAMPED, S_COEFFICIENTS, S_G, S_H_CACHED, S_T_PREV, S_U_PREV, S_V, type GateState } from './gate-state';

/**
 * Coefficients are reused while the frame interval stays within this relative distance of the one
 * they were computed for. Timestamps such as n/30 give intervals that differ in their last bits, and
 * more so late in a long stream (at t = 1e5 s one ulp of t is 1.5e-11 s, 4e-10 of a 30 fps interval);
 * recomputing exp/cos/sin for those would cost ten times the gate itself. The error admitted,
 * 1e-6 of dt (33 ns at 30 fps), moves g by less than 1e-6 of one frame's change: below the
 * resolution of the float32 logits it is fused with.
 */
export const DT_REUSE_RELATIVE_TOLERANCE = 1e-6;

const CHUNK_FRAMES = 8192;

export interface GateRunInput {
  /** u*(x) per frame; finite values outside [0, 1] are clamped (counted), NaN is refused. */
  uRef: Float32Array | Float64Array;
  /** Frame timestamps in seconds (strictly increasing within a stream). */
  timestampsSeconds: Float64Array;
  /** Interval used for the first frame of a stream, where no previous timestamp exists. */
  nominalDtSeconds: number;
}

export interface GateRunOutput {
  /** Gate position per frame (unclamped state; the fusion clamps it to [0, 1]). */
  g: Float64Array;
  /** Gate velocity per frame in 1/s. */
  v: Float64Array;
}

/**
 * Advances the gate over frames [from, to) and writes g (and v) for each.
 *
 * Convention (dynamics.md, "Which input a frame uses"): frame n fuses with the state after the
 * interval that ends at frame n, driven by frame n's own input:
 *   x[n] = Phi(h_n) x[n-1] + Gamma(h_n) u[n],  h_n = t[n] - t[n-1].
 * So the app's outputs are scipy's x[k+1] = Phi x[k] + Gamma u[k] one frame earlier.
 *
 * This one function is both the batch replay and the live step (a live step is the range [n, n+1)),
 * which is why the two are bit-identical. Returns how many inputs were clamped into [0, 1].
 * Throws INVALID_INPUT for NaN inputs or a non-positive / non-finite interval; the state and
 * outputs of the frames before it are kept.
 */
export function runGate(
  settings: GateSettings,
  input: GateRunInput,
  from: number,
  to: number,
  state: GateState,
  output: GateRunOutput,
): number {
  if (settings.mode === 'reset') return runResetGate(settings, input, from, to, state, output);
  const { uRef, timestampsSeconds, nominalDtSeconds } = input;
  let clamped = 0;
  let n = from;
  while (n < to) {
    // Frame n cannot use the cached coefficients (first frame, new settings, or a new interval):
    // check it, compute its coefficients, then run until the interval changes again.
    if (uRef[n] !== uRef[n]) throw new KnobError('INVALID_INPUT', `u_ref of frame ${n} is NaN`);
    // At stream start there is no previous frame: a virtual one sits a nominal interval earlier, so
    // the hot loop computes h = t - tPrev with no special case (a rarely taken branch there made V8
    // deoptimise it on every replay).
    if (state[S_T_PREV] !== state[S_T_PREV]) state[S_T_PREV] = timestampsSeconds[n] - nominalDtSeconds;
    const h = timestampsSeconds[n] - state[S_T_PREV];
    if (!(h > 0 && h < Infinity)) {
      throw new KnobError(
        'INVALID_INPUT',
        `frame ${n}: interval dt = ${h} s is not positive and finite (timestamps must increase)`,
      );
    }
    // Recompute only when the interval left the tolerance of the cached one, by the same test the
    // hot loop applies: then a live stream (one frame per call) and a batch replay use the same
    // coefficients for every frame, and their outputs stay bit-identical.
    const cached = state[S_H_CACHED];
    if (!(h >= cached - DT_REUSE_RELATIVE_TOLERANCE * cached && h <= cached + DT_REUSE_RELATIVE_TOLERANCE * cached)) {
      stepCoefficientsInto(settings, h, state, S_COEFFICIENTS);
      state[S_H_CACHED] = h;
    }
    // Chunks keep the hot loop a function V8 calls often: it is then optimised on entry, instead of
    // running each long replay in the interpreter until on-stack replacement catches up (which
    // boxed every intermediate double and cost up to 4x on the build machine).
    let next = n;
    do {
      n = next;
      next = advanceWithCachedCoefficients(
        uRef,
        timestampsSeconds,
        n,
        Math.min(to, n + CHUNK_FRAMES),
        state,
        output.g,
        output.v,
      );
      clamped += state[S_CLAMPED];
    } while (next === n + CHUNK_FRAMES && next < to);
    n = next;
  }
  return clamped;
}

/**
 * The hot loop: frames [from, to) while their interval stays within tolerance of the cached one.
 * No calls and no allocation inside, and only typed arrays and numbers as arguments, so callers
 * with differently shaped objects cannot make V8 deoptimise it. Returns the first frame it did not
 * process and leaves the number of clamped inputs in state[S_CLAMPED].
 */
function advanceWithCachedCoefficients(
  uRef: Float32Array | Float64Array,
  timestampsSeconds: Float64Array,
  from: number,
  to: number,
  state: GateState,
  outG: Float64Array,
  outV: Float64Array,
): number {
  const hCached = state[S_H_CACHED];
  const hLow = hCached - DT_REUSE_RELATIVE_TOLERANCE * hCached;
  const hHigh = hCached + DT_REUSE_RELATIVE_TOLERANCE * hCached;
  const p11 = state[S_COEFFICIENTS + C_P11];
  const p12 = state[S_COEFFICIENTS + C_P12];
  const p21 = state[S_COEFFICIENTS + C_P21];
  const p22 = state[S_COEFFICIENTS + C_P22];
  const blend = state[S_COEFFICIENTS + C_BLEND];
  let g = state[S_G];
  let v = state[S_V];
  let uPrev = state[S_U_PREV];
  let tPrev = state[S_T_PREV];
  let clamped = 0;
  let n = from;
  for (; n < to; n++) {
    const t = timestampsSeconds[n];
    const h = t - tPrev;
    if (!(h >= hLow && h <= hHigh)) break;
    let u = uRef[n];
    if (!(u >= 0 && u <= 1)) {
      if (u !== u) break;
      u = u < 0 ? 0 : 1;
      clamped++;
    }
    const uBar = u + blend * (uPrev - u);
    const e = g - uBar;
    const eNext = p11 * e + p12 * v;
    v = p21 * e + p22 * v;
    // Once g has settled onto u exactly, v decays by P22 per frame into subnormal numbers, and with
    // P22 > 1/2 it sticks at the smallest one (5e-324 * P22 rounds back to 5e-324); subnormal
    // arithmetic is ~50x slower. No physical velocity is below 1e-300 per second.
    if (v < 1e-300 && v > -1e-300) v = 0;
    g = uBar + eNext;
    uPrev = u;
    tPrev = t;
    outG[n] = g;
    outV[n] = v;
  }
  state[S_G] = g;
  state[S_V] = v;
  state[S_U_PREV] = uPrev;
  state[S_T_PREV] = tPrev;
  state[S_CLAMPED] = clamped;
  return n;
}

const resetScratch = new Float64Array(2);

/** runGate in reset mode: each frame reads the gate a horizon tau after rest at g0 under its own input (resetCoefficientsInto); the same contract as runGate. */
const runResetGate: typeof runGate = (settings, input, from, to, state, output) => {
  resetCoefficientsInto(settings, resetScratch);
  const p11 = resetScratch[0];
  const p21 = resetScratch[1];
  const g0 = settings.g0;
  const { uRef, timestampsSeconds } = input;
  const outG = output.g;
  const outV = output.v;
  let clamped = 0;
  for (let n = from; n < to; n++) {
    let u = uRef[n];
    if (!(u >= 0 && u <= 1)) {
      if (u !== u) throw new KnobError('INVALID_INPUT', `u_ref of frame ${n} is NaN`);
      u = u < 0 ? 0 : 1;
      clamped++;
    }
    const e0 = g0 - u;
    const g = u + p11 * e0;
    const v = p21 * e0;
    outG[n] = g;
    outV[n] = v;
    // Leaving reset mode continues from the last reading, so the switch is bumpless too.
    state[S_G] = g;
    state[S_V] = v;
    state[S_U_PREV] = u;
    state[S_T_PREV] = timestampsSeconds[n];
  }
  return clamped;
};
