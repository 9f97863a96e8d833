import { KnobError } from '../errors';
import type { GateSettings } from './gate-settings';
import {
  C_BLEND,
  C_P11,
  C_P12,
  C_P21,
  C_P22,
  resetCoefficientsInto,
  stepCoefficientsInto,
} from './step-coefficients';
import { S_COEFFICIENTS, S_G, S_H_CACHED, S_T_PREV, S_U_PREV, S_V, type GateState } from './gate-state';

/**
 * Coefficients are reused while the frame interval stays within this relative distance of the one
 * they were computed for: timestamps such as n/30 give intervals that differ in the last bits, and
 * recomputing exp/cos/sin for those would cost more than the gate itself. The error this admits
 * (1e-12 relative in dt) is far below float32 logits' resolution.
 */
export const DT_REUSE_RELATIVE_TOLERANCE = 1e-12;

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
  /** Gate velocity per frame in 1/s, or null when not wanted. */
  v: Float64Array | null;
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
 * Throws INVALID_INPUT for NaN inputs or a non-positive / non-finite interval, after storing the
 * state of the frames already processed (their outputs are kept).
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
  const outG = output.g;
  const outV = output.v;
  let g = state[S_G];
  let v = state[S_V];
  let uPrev = state[S_U_PREV];
  let tPrev = state[S_T_PREV];
  let hCached = state[S_H_CACHED];
  let p11 = state[S_COEFFICIENTS + C_P11];
  let p12 = state[S_COEFFICIENTS + C_P12];
  let p21 = state[S_COEFFICIENTS + C_P21];
  let p22 = state[S_COEFFICIENTS + C_P22];
  let blend = state[S_COEFFICIENTS + C_BLEND];
  let clamped = 0;
  for (let n = from; n < to; n++) {
    let u = uRef[n];
    if (!(u >= 0 && u <= 1)) {
      if (u !== u) {
        storeState(state, g, v, uPrev, tPrev);
        throw new KnobError('INVALID_INPUT', `u_ref of frame ${n} is NaN`);
      }
      u = u < 0 ? 0 : 1;
      clamped++;
    }
    const t = timestampsSeconds[n];
    const h = tPrev === tPrev ? t - tPrev : nominalDtSeconds;
    if (!(h > 0 && h < Infinity)) {
      storeState(state, g, v, uPrev, tPrev);
      throw new KnobError(
        'INVALID_INPUT',
        `frame ${n}: interval dt = ${h} s is not positive and finite (timestamps must increase)`,
      );
    }
    if (!(Math.abs(h - hCached) <= DT_REUSE_RELATIVE_TOLERANCE * hCached)) {
      stepCoefficientsInto(settings, h, state, S_COEFFICIENTS);
      hCached = h;
      state[S_H_CACHED] = h;
      p11 = state[S_COEFFICIENTS + C_P11];
      p12 = state[S_COEFFICIENTS + C_P12];
      p21 = state[S_COEFFICIENTS + C_P21];
      p22 = state[S_COEFFICIENTS + C_P22];
      blend = state[S_COEFFICIENTS + C_BLEND];
    }
    const uBar = u + blend * (uPrev - u);
    const e = g - uBar;
    const eNext = p11 * e + p12 * v;
    v = p21 * e + p22 * v;
    g = uBar + eNext;
    uPrev = u;
    tPrev = t;
    outG[n] = g;
    if (outV !== null) outV[n] = v;
  }
  storeState(state, g, v, uPrev, tPrev);
  return clamped;
}

/** Plain function, not a closure: a closure over the loop's locals would move them off registers. */
function storeState(state: GateState, g: number, v: number, uPrev: number, tPrev: number): void {
  state[S_G] = g;
  state[S_V] = v;
  state[S_U_PREV] = uPrev;
  state[S_T_PREV] = tPrev;
}

const resetScratch = new Float64Array(2);

function runResetGate(
  settings: GateSettings,
  input: GateRunInput,
  from: number,
  to: number,
  state: GateState,
  output: GateRunOutput,
): number {
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
    if (outV !== null) outV[n] = v;
    // Leaving reset mode continues from the last reading, so the switch is bumpless too.
    storeState(state, g, v, u, timestampsSeconds[n]);
  }
  return clamped;
}
