import type { ConditionChoice } from './calibrator-descriptor';

/**
 * The hysteresis of the condition-aware calibrator (conditional-calibration.ts, issue 30): over a
 * stream, the condition it applies changes only once the detector has read a condition other than
 * the applied one on `hysteresisFrames` consecutive frames (a dwell time, as a debounced switch
 * has), to the one read on the last of them, from that frame on. A detector that slips for a frame
 * or two keeps its temperature; a real change of condition is followed `hysteresisFrames - 1`
 * frames late. Counting any other condition (not one) matters where two conditions look alike
 * (shot and speckle noise): frames that alternate between them still move the stream off a third.
 * One frame (the default of a spec written before the hysteresis) is the detector read alone.
 *
 * The state is per stream, like the gate's: it carries across the frames of a stream where the gate
 * does (continuous mode) and starts afresh with it; in reset mode each frame is judged alone, its
 * detected condition applied. The step graph carries the same two numbers as state tensors
 * (step-graph.ts), so a deployed stream switches at the same frames as the app.
 */
export interface ConditionHysteresisState {
  /** The condition applied to the last frame (-1 before the stream's first frame). */
  applied: number;
  /** How many consecutive frames up to the last one were detected as another condition than `applied`. */
  run: number;
}

/** The most frames a hysteresis can wait (a minute at 30 fps); the spec's schema bounds it. */
export const MAX_HYSTERESIS_FRAMES = 1800;

export function createConditionHysteresis(): ConditionHysteresisState {
  return { applied: -1, run: 0 };
}

/** Back to the stream's start: the next frame applies the condition detected on it. */
export function resetConditionHysteresis(state: ConditionHysteresisState): void {
  state.applied = -1;
  state.run = 0;
}

/**
 * The condition applied to the next frame of a stream, given the one detected on it, the state
 * advanced past that frame. The first frame applies its own; after it, the detected condition is
 * applied once `hysteresisFrames` consecutive frames (this one included) were detected as other
 * than the applied one.
 */
export function nextAppliedCondition(
  state: ConditionHysteresisState,
  detected: number,
  hysteresisFrames: number,
): number {
  if (state.applied < 0 || detected === state.applied) {
    state.applied = detected;
    state.run = 0;
    return detected;
  }
  state.run++;
  if (state.run >= hysteresisFrames) {
    state.applied = detected;
    state.run = 0;
  }
  return state.applied;
}

/**
 * The condition applied to the row whose features sit at `features[offset ..)`: over a stream
 * (its state given), the detected condition through the hysteresis; judged alone (null), as detected.
 */
export function appliedCondition(
  choice: ConditionChoice,
  state: ConditionHysteresisState | null,
  features: Float32Array,
  offset: number,
): number {
  const detected = choice.detect(features, offset);
  return state === null ? detected : nextAppliedCondition(state, detected, choice.hysteresisFrames);
}
