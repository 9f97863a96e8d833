import type { GateSettings } from './gate-settings';
import { runGate } from './gate-kernel';
import { createGateState } from './gate-state';

export interface InputStep {
  /** Time at which u* jumps to `value`, in seconds from the start. */
  atSeconds: number;
  value: number;
}

export interface SteppedResponse {
  tSeconds: Float64Array;
  uRef: Float64Array;
  g: Float64Array;
}

/**
 * The gate's response to a piecewise-constant u*(t) sampled at a frame rate, from rest at the
 * first level: the preview the knob panel draws before any stream runs, computed by the same
 * runGate the streams use.
 */
export function steppedResponse(
  settings: GateSettings,
  steps: readonly InputStep[],
  durationSeconds: number,
  frameRateHz: number,
): SteppedResponse {
  const frames = Math.max(1, Math.round(durationSeconds * frameRateHz));
  const tSeconds = new Float64Array(frames);
  const uRef = new Float64Array(frames);
  const initial = steps.length > 0 ? steps[0].value : settings.g0;
  let stepIndex = 0;
  let level = initial;
  for (let i = 0; i < frames; i++) {
    const t = i / frameRateHz;
    while (stepIndex < steps.length && steps[stepIndex].atSeconds <= t) level = steps[stepIndex++].value;
    tSeconds[i] = t;
    uRef[i] = level;
  }
  const g = new Float64Array(frames);
  runGate(
    { ...settings, g0: initial },
    { uRef, timestampsSeconds: tSeconds, nominalDtSeconds: 1 / frameRateHz },
    0,
    frames,
    createGateState(initial),
    { g, v: new Float64Array(frames) },
  );
  return { tSeconds, uRef, g };
}
