import { KnobError } from '../errors';
import { FRAME_INTERVAL_RANGE_SECONDS, isInRange, outOfRangeMessage } from './accepted-ranges';
import type { GateSettings } from './gate-settings';
import { magnitudeFunction, type DiscreteConvention } from './frequency-response';
import { continuousStepAt, stepSeries } from './step-series';

/**
 * Step- and frequency-response figures of the gate for the current knobs.
 *
 * Definitions (tests/fixtures/reference/dynamics.md):
 * - overshoot: (peak - 1) x 100 % of a unit step from rest;
 * - rise time: 10 % to 90 % of the final value;
 * - settling time: the last time |g - 1| equals 2 % (the exact value, not 4/(zeta wn));
 * - bandwidth: the frequency where 20 log10 |G| = -3 dB exactly (not the 1/sqrt(2) point);
 * - resonant peak Mr = max |G| and its frequency wr (none when the magnitude never exceeds 1).
 */
export interface ResponseMetrics {
  overshootPercent: number;
  peakValue: number;
  /** Time of the first (largest) peak; null when the response never overshoots. */
  peakTimeSeconds: number | null;
  riseTimeSeconds: number;
  t10Seconds: number;
  t90Seconds: number;
  settlingTimeSeconds: number;
  /** -3 dB bandwidth; Infinity for Knob-IA (g = u*), null when not reached below Nyquist. */
  bandwidthRadPerSec: number | null;
  bandwidthHz: number | null;
  resonantPeak: number;
  /** null when max |G| is at DC (no resonance). */
  resonantFrequencyRadPerSec: number | null;
}

export const SETTLING_BAND = 0.02;
const MINUS_3_DB_POWER = 10 ** (-3 / 10);

/** Bisection for f(t) = target on [lo, hi] where f is monotone; to full double precision. */
function solveMonotone(f: (t: number) => number, target: number, lo: number, hi: number): number {
  const increasing = f(hi) > f(lo);
  for (let i = 0; i < 200; i++) {
    const mid = 0.5 * (lo + hi);
    if (mid === lo || mid === hi) break;
    const above = f(mid) > target;
    if (above === increasing) hi = mid;
    else lo = mid;
  }
  return 0.5 * (lo + hi);
}

/**
 * The first of start, 2 start, 4 start, ... where the rising f reaches target. Capped at
 * MAX_BRACKET_DOUBLINGS: over the accepted ranges the slowest pole, wn / (2 zeta) >= 5e-6 rad/s,
 * needs about 30 doublings from 1 / wn; past the cap the bracket is Infinity (the figure is then
 * "beyond any time"), never a loop.
 */
export const MAX_BRACKET_DOUBLINGS = 200;

function doublingBracket(f: (t: number) => number, target: number, start: number): number {
  let hi = start;
  for (let i = 0; i < MAX_BRACKET_DOUBLINGS; i++) {
    if (f(hi) >= target) return hi;
    hi *= 2;
  }
  return Infinity;
}

/** Analytic figures of the continuous gate. */
export function continuousResponseMetrics(settings: GateSettings): ResponseMetrics {
  const { variant, zeta, wnRadPerSec: wn } = settings;
  if (variant === 'instant') {
    return {
      overshootPercent: 0,
      peakValue: 1,
      peakTimeSeconds: null,
      riseTimeSeconds: 0,
      t10Seconds: 0,
      t90Seconds: 0,
      settlingTimeSeconds: 0,
      bandwidthRadPerSec: Infinity,
      bandwidthHz: Infinity,
      resonantPeak: 1,
      resonantFrequencyRadPerSec: null,
    };
  }
  if (variant === 'ema') {
    const bandwidth = wn * Math.sqrt(1 / MINUS_3_DB_POWER - 1);
    return {
      overshootPercent: 0,
      peakValue: 1,
      peakTimeSeconds: null,
      riseTimeSeconds: Math.log(9) / wn,
      t10Seconds: Math.log(10 / 9) / wn,
      t90Seconds: Math.log(10) / wn,
      settlingTimeSeconds: Math.log(1 / SETTLING_BAND) / wn,
      bandwidthRadPerSec: bandwidth,
      bandwidthHz: bandwidth / (2 * Math.PI),
      resonantPeak: 1,
      resonantFrequencyRadPerSec: null,
    };
  }
  const step = (t: number): number => continuousStepAt(settings, t);
  const sigma = zeta * wn;
  const underdamped = zeta < 1;
  const wd = underdamped ? wn * Math.sqrt(1 - zeta * zeta) : 0;
  const peakTime = underdamped ? Math.PI / wd : null;
  // Monotone bracket for the rise: up to the first peak, or far enough for an over-damped system.
  const riseHi = peakTime ?? doublingBracket(step, 0.99, 1 / wn);
  const t10 = solveMonotone(step, 0.1, 0, riseHi);
  const t90 = solveMonotone(step, 0.9, 0, riseHi);

  let settling: number;
  if (underdamped) {
    // Extrema of g - 1 at t_k = k pi / wd with magnitude exp(-sigma t_k). The response leaves the
    // band for the last time between the last extremum outside it and the next one.
    // k is analytic (the largest with exp(-sigma k pi / wd) > band); the loops only correct its
    // rounding by a step or two, so they are capped rather than trusted to end. With zeta >= 1e-3
    // k stays below 1,250 (accepted-ranges.ts): at zeta ~ 1e-16, k + 1 === k and an uncapped
    // correction never ended (issue 26).
    const halfPeriod = Math.PI / wd;
    let k = Math.floor(Math.log(1 / SETTLING_BAND) / (sigma * halfPeriod));
    for (let i = 0; i < 4 && k > 0 && Math.exp(-sigma * k * halfPeriod) <= SETTLING_BAND; i++) k--;
    for (let i = 0; i < 4 && Math.exp(-sigma * (k + 1) * halfPeriod) > SETTLING_BAND; i++) k++;
    const lo = k * halfPeriod;
    const hi = (k + 1) * halfPeriod;
    const target = k === 0 ? 1 - SETTLING_BAND : 1 + (k % 2 === 1 ? SETTLING_BAND : -SETTLING_BAND);
    settling = solveMonotone(step, target, lo, hi);
  } else {
    settling = solveMonotone(step, 1 - SETTLING_BAND, 0, doublingBracket(step, 1 - SETTLING_BAND, riseHi));
  }

  // |G|^2 = 1 / ((1 - x)^2 + 4 zeta^2 x), x = (w/wn)^2; solve |G|^2 = 10^(-0.3) for x.
  const bq = 4 * zeta * zeta - 2;
  const x = -bq / 2 + Math.sqrt((bq * bq) / 4 - (1 - 1 / MINUS_3_DB_POWER));
  const bandwidth = wn * Math.sqrt(x);
  const resonant = zeta < Math.SQRT1_2;
  const overshoot = underdamped ? Math.exp((-Math.PI * zeta) / Math.sqrt(1 - zeta * zeta)) : 0;
  return {
    overshootPercent: 100 * overshoot,
    peakValue: 1 + overshoot,
    peakTimeSeconds: peakTime,
    riseTimeSeconds: t90 - t10,
    t10Seconds: t10,
    t90Seconds: t90,
    settlingTimeSeconds: settling,
    bandwidthRadPerSec: bandwidth,
    bandwidthHz: bandwidth / (2 * Math.PI),
    resonantPeak: resonant ? 1 / (2 * zeta * Math.sqrt(1 - zeta * zeta)) : 1,
    resonantFrequencyRadPerSec: resonant ? wn * Math.sqrt(1 - 2 * zeta * zeta) : null,
  };
}

/**
 * Step figures read off a sampled step response, as python-control's step_info does (no
 * interpolation between samples): rise = T[first >= 90 %] - T[first >= 10 %]; settling =
 * T[1 + last index with |y - 1| >= 2 %]; peak = max y and its time; overshoot = (peak - final) /
 * (final - rest), where rest is the value before the step (0 here; python-control uses y[0], which
 * is the same in its convention, where sample 0 is the rest sample). `tSeconds[i]` is the time of
 * sample i.
 */
export interface SampledStepInfo {
  /** null when the samples never reach 90 % (the rise is beyond their horizon). */
  riseTimeSeconds: number | null;
  /** null when the samples end outside the band (settling is beyond their horizon). */
  settlingTimeSeconds: number | null;
  peakValue: number;
  peakTimeSeconds: number;
  overshootPercent: number;
}

export function sampledStepInfo(
  y: Float64Array,
  tSeconds: Float64Array,
  finalValue = 1,
  restValue = 0,
): SampledStepInfo {
  let lower = -1;
  let upper = -1;
  let peakIndex = 0;
  let lastOutside = -1;
  for (let i = 0; i < y.length; i++) {
    if (lower < 0 && y[i] >= 0.1 * finalValue) lower = i;
    if (upper < 0 && y[i] >= 0.9 * finalValue) upper = i;
    if (Math.abs(y[i]) > Math.abs(y[peakIndex])) peakIndex = i;
    if (Math.abs(y[i] / finalValue - 1) >= SETTLING_BAND) lastOutside = i;
  }
  const settledIndex = lastOutside + 1;
  const peakValue = Math.abs(y[peakIndex]);
  return {
    riseTimeSeconds: lower >= 0 && upper >= 0 ? tSeconds[upper] - tSeconds[lower] : null,
    settlingTimeSeconds: settledIndex < y.length ? tSeconds[settledIndex] : null,
    peakValue,
    peakTimeSeconds: tSeconds[peakIndex],
    overshootPercent: Math.max(0, (100 * (peakValue - finalValue)) / (finalValue - restValue)),
  };
}

/**
 * Figures of the discrete gate the app runs at frame interval h: step figures read off the frames
 * (app convention: frame 0 is the first frame driven by the step, at t = 0; scipy convention
 * prepends the rest sample, as python-control's step_info on the sampled system does), and the
 * -3 dB bandwidth and resonant peak of |G(e^{j w h})| below Nyquist.
 */
export interface DiscreteResponseMetrics extends SampledStepInfo {
  convention: DiscreteConvention;
  hSeconds: number;
  /**
   * Time of the last frame the step figures are read from: max(5 x the continuous settling time,
   * 20 frames), at most MAX_RESPONSE_FRAMES frames. A figure past it is null ("beyond it").
   */
  horizonSeconds: number;
  bandwidthRadPerSec: number | null;
  bandwidthHz: number | null;
  resonantPeak: number;
  resonantFrequencyRadPerSec: number | null;
}

/** The most frames a discrete step response is read from (a bounded cost for any knobs). */
export const MAX_RESPONSE_FRAMES = 200_000;

export function discreteResponseMetrics(
  settings: GateSettings,
  hSeconds: number,
  convention: DiscreteConvention = 'app',
): DiscreteResponseMetrics {
  if (!isInRange(hSeconds, FRAME_INTERVAL_RANGE_SECONDS))
    throw new KnobError(
      'INVALID_SETTINGS',
      outOfRangeMessage(`frame interval (${hSeconds} s)`, FRAME_INTERVAL_RANGE_SECONDS),
    );
  const continuous = continuousResponseMetrics(settings);
  const horizon = Math.max(5 * continuous.settlingTimeSeconds, 20 * hSeconds);
  const frames = Math.min(MAX_RESPONSE_FRAMES, Math.ceil(horizon / hSeconds) + 1);
  const series = stepSeries(settings, { system: 'discrete', hSeconds, frames, convention });
  const info = sampledStepInfo(series.g, series.tSeconds);

  const nyquist = Math.PI / hSeconds;
  const magnitude = magnitudeFunction(settings, { system: 'discrete', hSeconds });
  // Scan a grid, then refine the first -3 dB crossing by bisection and the peak by golden section.
  const gridPoints = 2048;
  const threshold = Math.sqrt(MINUS_3_DB_POWER);
  let bandwidth: number | null = null;
  let peakW = 0;
  let peakM = magnitude(0);
  let prevW = 0;
  for (let i = 1; i <= gridPoints; i++) {
    const w = (nyquist * i) / gridPoints;
    const m = magnitude(w);
    if (m > peakM) {
      peakM = m;
      peakW = w;
    }
    if (bandwidth === null && m < threshold) {
      bandwidth = solveMonotone(magnitude, threshold, prevW, w);
    }
    prevW = w;
  }
  let resonantFrequency: number | null = null;
  if (peakW > 0) {
    let lo = Math.max(0, peakW - nyquist / gridPoints);
    let hi = Math.min(nyquist, peakW + nyquist / gridPoints);
    const ratio = (Math.sqrt(5) - 1) / 2;
    for (let i = 0; i < 200 && hi - lo > 1e-14 * hi; i++) {
      const a = hi - ratio * (hi - lo);
      const b = lo + ratio * (hi - lo);
      if (magnitude(a) > magnitude(b)) hi = b;
      else lo = a;
    }
    resonantFrequency = 0.5 * (lo + hi);
    peakM = magnitude(resonantFrequency);
  }
  return {
    ...info,
    convention,
    hSeconds,
    horizonSeconds: series.tSeconds[series.tSeconds.length - 1]!,
    bandwidthRadPerSec: bandwidth,
    bandwidthHz: bandwidth === null ? null : bandwidth / (2 * Math.PI),
    resonantPeak: peakM,
    resonantFrequencyRadPerSec: resonantFrequency,
  };
}

/**
 * Worst excursion past [0, 1] for inputs in [0, 1] from rest (dynamics.md, clipping bound):
 * 0 for zeta >= 1, K / (1 - K) with K = exp(-pi zeta / sqrt(1 - zeta^2)) otherwise
 * (reached by switching the input between 0 and 1 at every peak).
 */
export function clippingBound(zeta: number): number {
  if (zeta >= 1) return 0;
  const k = Math.exp((-Math.PI * zeta) / Math.sqrt(1 - zeta * zeta));
  return k / (1 - k);
}
