import type { GateSettings } from './gate-settings';
import { zohTransitionInto } from './zoh-transition';

/**
 * Every variant and discretisation is one affine update in error form (so DC gain 1 is structural):
 *   u_bar = u + blend (u_prev - u);  e = g - u_bar;
 *   e' = P11 e + P12 v;  v' = P21 e + P22 v;  g' = u_bar + e'.
 * - second-order, zoh: P = e^{A h} (exact for input held over the frame interval).
 * - second-order, tustin: trapezoidal rule with the input interpolated linearly between frames,
 *   which is exactly the bilinear map s = (2/h)(z-1)/(z+1) of G(s); blend = 1/2.
 *   Pre-warping at wn replaces h by (2/wn) tan(wn h/2).
 * - ema (ODE-Lite, g' = wn (u - g)): P11 = exp(-wn h) (zoh, alpha = 1 - exp(-wn h)) or
 *   (1 - wn h/2)/(1 + wn h/2) (tustin); it carries no velocity (v = 0).
 * - instant (Knob-IA): P = 0, blend = 0, so g = u.
 */
export const COEFFICIENT_COUNT = 5;
export const C_P11 = 0;
export const C_P12 = 1;
export const C_P21 = 2;
export const C_P22 = 3;
export const C_BLEND = 4;

/** Effective step of the bilinear map: h, or (2/wn) tan(wn h/2) when pre-warped. */
export function tustinStepSeconds(settings: GateSettings, hSeconds: number): number {
  if (!settings.tustinPrewarp) return hSeconds;
  const half = (settings.wnRadPerSec * hSeconds) / 2;
  // Pre-warping maps wn onto the frequency axis only below Nyquist; beyond it the map folds.
  // The bilinear map is still stable there, so fall back to plain Tustin rather than fail.
  if (half >= Math.PI / 2) return hSeconds;
  return (2 / settings.wnRadPerSec) * Math.tan(half);
}

export function stepCoefficientsInto(settings: GateSettings, hSeconds: number, out: Float64Array, offset = 0): void {
  const { variant, discretization, zeta, wnRadPerSec: wn } = settings;
  if (variant === 'instant') {
    out[offset + C_P11] = 0;
    out[offset + C_P12] = 0;
    out[offset + C_P21] = 0;
    out[offset + C_P22] = 0;
    out[offset + C_BLEND] = 0;
    return;
  }
  if (discretization === 'zoh') {
    out[offset + C_BLEND] = 0;
    if (variant === 'ema') {
      out[offset + C_P11] = Math.exp(-wn * hSeconds);
      out[offset + C_P12] = 0;
      out[offset + C_P21] = 0;
      out[offset + C_P22] = 0;
    } else {
      zohTransitionInto(zeta, wn, hSeconds, out, offset + C_P11);
    }
    return;
  }
  const h = tustinStepSeconds(settings, hSeconds);
  out[offset + C_BLEND] = 0.5;
  if (variant === 'ema') {
    const a = (wn * h) / 2;
    out[offset + C_P11] = (1 - a) / (1 + a);
    out[offset + C_P12] = 0;
    out[offset + C_P21] = 0;
    out[offset + C_P22] = 0;
    return;
  }
  // Ad = (I - A h/2)^{-1} (I + A h/2), written out for the 2x2 companion matrix.
  const damping = zeta * wn * h;
  const stiffness = (wn * wn * h * h) / 4;
  const det = 1 + damping + stiffness;
  out[offset + C_P11] = (1 + damping - stiffness) / det;
  out[offset + C_P12] = h / det;
  out[offset + C_P21] = (-wn * wn * h) / det;
  out[offset + C_P22] = (1 - damping - stiffness) / det;
}

/**
 * Reset mode reads the gate after a horizon tau of constant input from rest at g0:
 * g = g0 + S(tau) (u - g0), where S is the exact continuous step response of the variant, so the
 * discretisation does not enter (it only matters for state carried across frames).
 * Writes [1 - S(tau) (= P11 at tau), P21 at tau] so that g = u + P11 (g0 - u), v = P21 (g0 - u).
 */
export function resetCoefficientsInto(settings: GateSettings, out: Float64Array): void {
  const { variant, zeta, wnRadPerSec: wn, tauSeconds } = settings;
  if (variant === 'instant') {
    out[0] = 0;
    out[1] = 0;
  } else if (variant === 'ema') {
    out[0] = Math.exp(-wn * tauSeconds);
    out[1] = 0;
  } else {
    zohTransitionInto(zeta, wn, tauSeconds, resetPhiScratch);
    out[0] = resetPhiScratch[0];
    out[1] = resetPhiScratch[2];
  }
}

const resetPhiScratch = new Float64Array(4);
