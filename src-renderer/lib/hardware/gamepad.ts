import type { ControlReading } from './encoder';
import type { ControlSource } from './bindings';

/**
 * Gamepad controls (the W3C Gamepad API: axes in [-1, 1], buttons with a value in [0, 1]) as the
 * bound controls read them. The API is polled, not evented: the desk reads each bound pad once an
 * animation frame. A stick bound as a jog turns its knob at a speed set by its deflection (outside
 * a dead zone, where a stick at rest drifts), in whole steps of the knob's step, so a slow jog
 * still lands on the knob's step values; a stick or trigger bound as absolute sets a position (with
 * soft takeover, bound-control.ts); a button presses.
 */
export interface PadSnapshot {
  id: string;
  axes: readonly number[];
  buttons: ReadonlyArray<{ pressed: boolean; value: number }>;
}

/** A stick at rest reads up to about 0.1 on common pads; inside this deflection a jog does nothing. */
export const JOG_DEAD_ZONE = 0.15;
/** Steps a second at full deflection: the whole travel of a 0.01-step knob in 2.5 s. */
export const JOG_STEPS_PER_SECOND = 40;
/** A control moved this far from where it rested at the start of learning is the one learnt. */
export const LEARN_MOVEMENT = 0.5;

/** Steps (fractional) a jog turns in `dtSeconds` at `deflection`; 0 inside the dead zone. */
export function jogSteps(deflection: number, dtSeconds: number): number {
  const magnitude = Math.abs(deflection);
  if (!(magnitude > JOG_DEAD_ZONE) || !(dtSeconds > 0)) return 0;
  const scaled = (Math.min(1, magnitude) - JOG_DEAD_ZONE) / (1 - JOG_DEAD_ZONE);
  return Math.sign(deflection) * scaled * JOG_STEPS_PER_SECOND * dtSeconds;
}

/**
 * Whole steps to take now from a jog's fractional steps, carrying the remainder: the knob rounds
 * each value to a few digits, so fractional steps applied one by one could be rounded away.
 */
export function wholeSteps(carried: number, steps: number): { steps: number; carried: number } {
  const total = carried + steps;
  const whole = Math.trunc(total);
  return { steps: whole, carried: total - whole };
}

/** A pad's control read under its binding's encoding (jog readings are made by the caller from jogSteps). */
export function readPad(
  pad: PadSnapshot,
  source: Extract<ControlSource, { device: 'gamepad' }>,
): ControlReading | null {
  if (source.control === 'axis') {
    const axis = pad.axes[source.index];
    return axis === undefined || !Number.isFinite(axis) ? null : { absolute: Math.min(1, Math.max(0, (axis + 1) / 2)) };
  }
  const button = pad.buttons[source.index];
  if (button === undefined) return null;
  return { absolute: Number.isFinite(button.value) ? Math.min(1, Math.max(0, button.value)) : button.pressed ? 1 : 0 };
}

/** The pad's control that moved from `rest` while learning (a button pressed, an axis moved past LEARN_MOVEMENT), or null. */
export function movedControl(
  pad: PadSnapshot,
  rest: PadSnapshot,
): { control: 'axis' | 'button'; index: number } | null {
  for (let index = 0; index < pad.buttons.length; index++)
    if (pad.buttons[index]!.pressed && !(rest.buttons[index]?.pressed ?? false)) return { control: 'button', index };
  for (let index = 0; index < pad.axes.length; index++) {
    const moved = Math.abs(pad.axes[index]! - (rest.axes[index] ?? 0));
    if (moved > LEARN_MOVEMENT) return { control: 'axis', index };
  }
  return null;
}

/** A copy of a pad's state (the API's objects may be live views the browser updates). */
export function snapshotOf(pad: {
  id: string;
  axes: readonly number[];
  buttons: ReadonlyArray<{ pressed: boolean; value: number }>;
}): PadSnapshot {
  return { id: pad.id, axes: [...pad.axes], buttons: pad.buttons.map((b) => ({ pressed: b.pressed, value: b.value })) };
}
