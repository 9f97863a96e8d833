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
  // scipy: one sample more, the rest sample first; the gate writes the driven frames after it, and
  // the first `frames` instants are the gate's own time stamps (fresh arrays: 200,000 frames is
  // 1.6 MB each, and the tuner asks for a series per setting)
  const rest = scipy ? 1 : 0;
  const tSeconds = new Float64Array(frames + rest);
  for (let i = 0; i < tSeconds.length; i++) tSeconds[i] = i * hSeconds;
  const g = new Float64Array(frames + rest);
  const { ones, velocity } = stepScratch(frames);
  runGate(
    stepSettings,
    { uRef: ones, timestampsSeconds: tSeconds.subarray(0, frames), nominalDtSeconds: hSeconds },
    0,
    frames,
    createGateState(0),
    { g: g.subarray(rest), v: velocity },
  );
  return { tSeconds, g };
}

/** The step's input (u = 1) and the gate's velocity, which nobody reads: kept, grown when needed. */
let scratch = { ones: new Float64Array(0), velocity: new Float64Array(0) };
function stepScratch(frames: number): typeof scratch {
  if (scratch.ones.length < frames)
    scratch = { ones: new Float64Array(frames).fill(1), velocity: new Float64Array(frames) };
  return scratch;
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
