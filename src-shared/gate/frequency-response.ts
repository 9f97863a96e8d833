import { KnobError } from '../errors';
import type { GateSettings } from './gate-settings';
import { C_BLEND, C_P11, C_P12, C_P21, C_P22, COEFFICIENT_COUNT, stepCoefficientsInto } from './step-coefficients';

/**
 * Frequency response of the gate, u* -> g.
 *
 * Continuous: G(s) = wn^2 / (s^2 + 2 zeta wn s + wn^2) (second-order), wn / (s + wn) (ema), 1 (instant).
 *
 * Discrete: the transfer function of exactly the update the app runs (step-coefficients.ts), at a
 * fixed frame interval h, in one of two conventions (dynamics.md, "Which input a frame uses"):
 * - 'app': x[n] = P x[n-1] + (I - P) e1 u_bar[n], u_bar[n] = (1 - b) u[n] + b u[n-1];
 *   G_app(z) = C (I - P z^-1)^-1 (I - P) e1 ((1 - b) + b z^-1).
 * - 'scipy': x[k+1] = Phi x[k] + Gamma u[k] (scipy.signal / python-control), i.e. z^-1 G_app(z) for
 *   ZOH. Tustin's bilinear transfer function already has direct feedthrough, so both conventions
 *   coincide for it.
 * Phases are in degrees, unwrapped continuously from 0 at DC.
 */
export type DiscreteConvention = 'app' | 'scipy';

export interface FrequencyPoint {
  magnitudeDb: number;
  phaseDeg: number;
}

export interface FrequencySeries {
  wRadPerSec: Float64Array;
  magnitudeDb: Float64Array;
  phaseDeg: Float64Array;
}

/** Complex continuous response at w (rad/s) as [re, im]. */
function continuousComplex(settings: GateSettings, w: number, out: Float64Array): void {
  const { variant, zeta, wnRadPerSec: wn } = settings;
  if (variant === 'instant') {
    out[0] = 1;
    out[1] = 0;
    return;
  }
  // 1 / (a + j b) = (a - j b) / (a^2 + b^2)
  let num: number;
  let a: number;
  let b: number;
  if (variant === 'ema') {
    num = wn;
    a = wn;
    b = w;
  } else {
    num = wn * wn;
    a = wn * wn - w * w;
    b = 2 * zeta * wn * w;
  }
  const d = a * a + b * b;
  out[0] = (num * a) / d;
  out[1] = (-num * b) / d;
}

/** Complex discrete response at w for the update with the given coefficients, app convention. */
function discreteComplex(coefficients: Float64Array, hSeconds: number, w: number, out: Float64Array): void {
  const p11 = coefficients[C_P11];
  const p12 = coefficients[C_P12];
  const p21 = coefficients[C_P21];
  const p22 = coefficients[C_P22];
  const blend = coefficients[C_BLEND];
  // q = z^-1 = e^{-j w h}
  const qr = Math.cos(w * hSeconds);
  const qi = -Math.sin(w * hSeconds);
  // M = I - P q
  const m11r = 1 - p11 * qr;
  const m11i = -p11 * qi;
  const m12r = -p12 * qr;
  const m12i = -p12 * qi;
  const m21r = -p21 * qr;
  const m21i = -p21 * qi;
  const m22r = 1 - p22 * qr;
  const m22i = -p22 * qi;
  const r1 = 1 - p11;
  const r2 = -p21;
  // y1 = (r1 M22 - M12 r2) / det(M)
  const nr = r1 * m22r - m12r * r2;
  const ni = r1 * m22i - m12i * r2;
  const detr = m11r * m22r - m11i * m22i - (m12r * m21r - m12i * m21i);
  const deti = m11r * m22i + m11i * m22r - (m12r * m21i + m12i * m21r);
  const dd = detr * detr + deti * deti;
  const yr = (nr * detr + ni * deti) / dd;
  const yi = (ni * detr - nr * deti) / dd;
  // times ((1 - b) + b q)
  const fr = 1 - blend + blend * qr;
  const fi = blend * qi;
  out[0] = yr * fr - yi * fi;
  out[1] = yr * fi + yi * fr;
}

export type ResponseSystem = 'continuous' | 'discrete';

/** How far past Nyquist a discrete series may ask (32 x this many unwrap steps at most). */
export const MAX_UNWRAP_NYQUISTS = 1024;

export interface FrequencyResponseOptions {
  /** Which system: the continuous gate or the discretised update at interval hSeconds. */
  system: ResponseSystem;
  /** Frame interval for the discrete system (ignored for continuous). */
  hSeconds: number;
  convention?: DiscreteConvention;
}

/**
 * Bode series over increasing frequencies wRadPerSec (non-negative and increasing).
 * The discrete phase is unwrapped on a dense internal grid from DC (successive points less than 180
 * degrees apart), so any requested grid is safe; the continuous phase needs no unwrapping.
 */
export function frequencyResponseSeries(
  settings: GateSettings,
  wRadPerSec: Float64Array,
  options: FrequencyResponseOptions,
): FrequencySeries {
  const n = wRadPerSec.length;
  const magnitudeDb = new Float64Array(n);
  const phaseDeg = new Float64Array(n);
  const coefficients = new Float64Array(COEFFICIENT_COUNT);
  const discrete = options.system === 'discrete';
  if (discrete) stepCoefficientsInto(settings, options.hSeconds, coefficients);
  const shiftToScipy = discrete && (options.convention ?? 'app') === 'scipy' && settings.discretization === 'zoh';
  const value = new Float64Array(2);
  const evaluate = (w: number): void => discreteComplex(coefficients, options.hSeconds, w, value);
  // The continuous gate's phase lies in (-180, 0] degrees (a second-order low-pass): atan2's
  // principal value is already unwrapped, so no walk is needed, whatever w / wn is.
  if (!discrete) {
    for (let i = 0; i < n; i++) {
      continuousComplex(settings, wRadPerSec[i], value);
      magnitudeDb[i] = 20 * Math.log10(Math.hypot(value[0], value[1]));
      phaseDeg[i] = (Math.atan2(value[1], value[0]) * 180) / Math.PI;
    }
    return { wRadPerSec: Float64Array.from(wRadPerSec), magnitudeDb, phaseDeg };
  }
  // Discrete: unwrap by walking from DC in steps of Nyquist / 32, small enough that the phase cannot
  // jump by 180 degrees. The walk is bounded: frequencies past MAX_UNWRAP_NYQUISTS x Nyquist (aliases
  // of lower ones) are refused rather than walked to.
  const maxStep = Math.PI / (32 * options.hSeconds);
  const highest = n === 0 ? 0 : wRadPerSec[n - 1];
  if (!(highest <= (MAX_UNWRAP_NYQUISTS * Math.PI) / options.hSeconds))
    throw new KnobError(
      'INVALID_INPUT',
      `frequency ${highest} rad/s is not within ${MAX_UNWRAP_NYQUISTS} x Nyquist (${Math.PI / options.hSeconds} rad/s) of the frame interval ${options.hSeconds} s`,
    );
  let wPrev = 0;
  let phasePrev = 0;
  for (let i = 0; i < n; i++) {
    const wTarget = wRadPerSec[i];
    if (!(wTarget >= wPrev))
      throw new KnobError('INVALID_INPUT', `frequencies must be non-negative and increasing (at index ${i})`);
    let w = wPrev;
    while (w < wTarget) {
      w = Math.min(wTarget, w + maxStep);
      evaluate(w);
      let phase = Math.atan2(value[1], value[0]);
      phase += 2 * Math.PI * Math.round((phasePrev - phase) / (2 * Math.PI));
      phasePrev = phase;
    }
    if (wTarget === wPrev && i === 0) evaluate(wTarget);
    wPrev = wTarget;
    const magnitude = Math.hypot(value[0], value[1]);
    magnitudeDb[i] = 20 * Math.log10(magnitude);
    // scipy convention: multiply by z^-1 = e^{-j w h}, a pure phase lag of w h.
    phaseDeg[i] = ((phasePrev - (shiftToScipy ? wTarget * options.hSeconds : 0)) * 180) / Math.PI;
  }
  return { wRadPerSec: Float64Array.from(wRadPerSec), magnitudeDb, phaseDeg };
}

export function frequencyResponseAt(
  settings: GateSettings,
  wRadPerSec: number,
  options: FrequencyResponseOptions,
): FrequencyPoint {
  const series = frequencyResponseSeries(settings, Float64Array.of(wRadPerSec), options);
  return { magnitudeDb: series.magnitudeDb[0], phaseDeg: series.phaseDeg[0] };
}

/** Magnitude |G| (linear) at one frequency, without phase bookkeeping. */
export function magnitudeAt(settings: GateSettings, wRadPerSec: number, options: FrequencyResponseOptions): number {
  return magnitudeFunction(settings, options)(wRadPerSec);
}

/**
 * w -> |G(w)| (linear) of one setting, its discrete coefficients computed once: a response's
 * bandwidth and resonance search evaluates it about 2,500 times, and recomputing the ZOH transition
 * each time was most of the tuner's response figures (400 settings: 148 ms of CPU, 2026-12-07).
 */
export function magnitudeFunction(settings: GateSettings, options: FrequencyResponseOptions): (w: number) => number {
  const value = new Float64Array(2);
  if (options.system === 'discrete') {
    const coefficients = new Float64Array(COEFFICIENT_COUNT);
    stepCoefficientsInto(settings, options.hSeconds, coefficients);
    return (w) => {
      discreteComplex(coefficients, options.hSeconds, w, value);
      return Math.hypot(value[0], value[1]);
    };
  }
  return (w) => {
    continuousComplex(settings, w, value);
    return Math.hypot(value[0], value[1]);
  };
}

/**
 * Discrete transfer function of the ZOH second-order gate in scipy's convention, for comparison
 * with scipy.signal.cont2discrete: num [0, Gamma1, Phi12 Gamma2 - Phi22 Gamma1], den [1, -tr Phi, det Phi].
 * Tustin: num/den of the bilinear map (which is what the trapezoidal update realises).
 */
export function discreteTransferFunction(
  settings: GateSettings,
  hSeconds: number,
): { num: [number, number, number]; den: [number, number, number] } {
  const c = new Float64Array(COEFFICIENT_COUNT);
  stepCoefficientsInto(settings, hSeconds, c);
  const p11 = c[C_P11];
  const p12 = c[C_P12];
  const p21 = c[C_P21];
  const p22 = c[C_P22];
  const den: [number, number, number] = [1, -(p11 + p22), p11 * p22 - p12 * p21];
  const gamma1 = 1 - p11;
  const gamma2 = -p21;
  if (c[C_BLEND] === 0) {
    return { num: [0, gamma1, p12 * gamma2 - p22 * gamma1], den };
  }
  // Trapezoidal update: G(z) = C (zI - P)^-1 (I - P) e1 (z + 1) / 2
  //   = [gamma1 z + (p12 gamma2 - p22 gamma1)] (z + 1) / (2 den)
  const a = gamma1 / 2;
  const b = (p12 * gamma2 - p22 * gamma1) / 2;
  return { num: [a, a + b, b], den };
}
