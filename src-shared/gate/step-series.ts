import { DEFAULT_GATE_SETTINGS, type GateSettings } from './gate-settings';
import { runGate } from './gate-kernel';
import { createGateState } from './gate-state';
import type { DiscreteConvention } from './frequency-response';
import { zohTransitionInto } from './zoh-transition';

export interface StepSeries {
  tSeconds: Float64Array;
  g: Float64Array;
}

export type StepSeriesOptions =
  | { system: 'continuous'; durationSeconds: number; points: number }
  | { system: 'discrete'; hSeconds: number; frames: number; convention?: DiscreteConvention };

/**
 * Unit step response from rest at 0, for plots and measurements.
 * Continuous: the exact curve sampled on `points` instants over [0, duration].
 * Discrete: the app's own update (runGate, continuous mode) driven by u = 1 on every frame.
 * In the app convention sample n is frame n at t = n h; the scipy convention prepends the rest sample
 * (t = 0, g = 0), which shifts every later sample one frame later.
 */
export function stepSeries(settings: GateSettings, options: StepSeriesOptions): StepSeries {
  if (options.system === 'continuous') {
    const { durationSeconds, points } = options;
    const tSeconds = new Float64Array(points);
    const g = new Float64Array(points);
    for (let i = 0; i < points; i++) {
      const t = points === 1 ? 0 : (durationSeconds * i) / (points - 1);
      tSeconds[i] = t;
      g[i] = continuousStepAt(settings, t);
    }
    return { tSeconds, g };
  }
  const { hSeconds, frames } = options;
  const scipy = (options.convention ?? 'app') === 'scipy';
  const stepSettings: GateSettings = { ...DEFAULT_GATE_SETTINGS, ...settings, mode: 'continuous', g0: 0 };
  const uRef = new Float64Array(frames).fill(1);
  const timestampsSeconds = new Float64Array(frames);
  for (let i = 0; i < frames; i++) timestampsSeconds[i] = i * hSeconds;
  const driven = new Float64Array(frames);
  runGate(stepSettings, { uRef, timestampsSeconds, nominalDtSeconds: hSeconds }, 0, frames, createGateState(0), {
    g: driven,
    v: new Float64Array(frames),
  });
  if (!scipy) return { tSeconds: timestampsSeconds, g: driven };
  const g = new Float64Array(frames + 1);
  g.set(driven, 1);
  const tSeconds = new Float64Array(frames + 1);
  for (let i = 0; i <= frames; i++) tSeconds[i] = i * hSeconds;
  return { tSeconds, g };
}

/** Unit step response of the continuous gate from rest at 0, at time t >= 0. */
export function continuousStepAt(settings: GateSettings, tSeconds: number): number {
  const { variant, zeta, wnRadPerSec: wn } = settings;
  if (variant === 'instant') return 1;
  if (variant === 'ema') return 1 - Math.exp(-wn * tSeconds);
  zohTransitionInto(zeta, wn, tSeconds, phiScratch);
  return 1 - phiScratch[0];
}
const phiScratch = new Float64Array(4);
