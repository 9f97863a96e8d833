import { COEFFICIENT_COUNT } from './step-coefficients';

/**
 * The gate's carried state, one small Float64Array so that live stepping and batch replay share it
 * without allocation: position g, velocity v (1/s), the previous frame's input and timestamp (for
 * Tustin's interpolation and for dt), and the coefficients cached for the last frame interval.
 */
export const S_G = 0;
export const S_V = 1;
export const S_U_PREV = 2;
/** NaN until the first frame: the first interval is then the stream's nominal dt. */
export const S_T_PREV = 3;
/** The interval the cached coefficients were computed for (NaN: none cached). */
export const S_H_CACHED = 4;
/** Scratch: inputs clamped by the last run of the hot loop. */
export const S_CLAMPED = 5;
export const S_COEFFICIENTS = 6;
export const GATE_STATE_LENGTH = S_COEFFICIENTS + COEFFICIENT_COUNT;

export type GateState = Float64Array;

/** At rest at g0: g = g0, v = 0, and the (virtual) previous input equals g0, i.e. equilibrium. */
export function createGateState(g0: number): GateState {
  const state = new Float64Array(GATE_STATE_LENGTH);
  resetGateState(state, g0);
  return state;
}

export function resetGateState(state: GateState, g0: number): void {
  state.fill(0);
  state[S_G] = g0;
  state[S_V] = 0;
  state[S_U_PREV] = g0;
  state[S_T_PREV] = Number.NaN;
  state[S_H_CACHED] = Number.NaN;
}

/**
 * Retuning is bumpless: (g, v) stay as they are; only the cached coefficients are dropped so the
 * next frame uses the new zeta, wn, variant or discretisation.
 */
export function invalidateCoefficients(state: GateState): void {
  state[S_H_CACHED] = Number.NaN;
}
