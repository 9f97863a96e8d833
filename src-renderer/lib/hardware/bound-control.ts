import { roundForDisplay, stepValue, travelToValue, valueToTravel, type KnobScale } from '../knob-scale';
import type { ControlReading } from './encoder';

/**
 * What a hardware control's reading does to the value it is bound to. Pure, with the control's
 * memory passed in and returned (ControlMemory), so the desk's state module only stores it.
 *
 * A continuous knob (zeta, wn, tau) moves through the on-screen knob's own scale (knob-scale.ts),
 * so wn travels logarithmically from hardware as on screen:
 * - a relative encoder steps the knob's travel by the on-screen knob's own step sizes: its
 *   arrow-key step per detent, its fine step while fine is held, its PageUp step while coarse is;
 * - an absolute control sets the travel, with soft takeover: after binding, after fine mode and
 *   after the value moved by another hand (the mouse, the tuner, an import), the control takes the
 *   value over only once it reaches it (within PICKUP_TRAVEL) or crosses it in a move a knob can
 *   make between two messages (at most MAX_CROSSING_MOVE), so the value never jumps to where the
 *   hardware happens to sit (the "pickup" of DJ and lighting desks), nor to the far end when a
 *   relative encoder is read as absolute by mistake (1, 1, 127 is not a turn across the range);
 * - in fine mode an absolute control moves the value by a tenth of its own movement (FINE_RATIO),
 *   from where the value is.
 * A choice (the variant) is picked when a position enters another choice's slice of the travel
 * (so a control at rest does not hold the choice against the mouse), stepped one at a time by a
 * relative encoder, or advanced by a button. An action (play/pause) and the fine and coarse
 * modifiers follow a button's press.
 */
export interface ControlMemory {
  /** An absolute control has taken over the value (soft takeover). */
  engaged: boolean;
  /** The control's last absolute position, in [0, 1]. */
  lastPosition: number | null;
  /** The travel of the value this control set last: another hand moved it when the knob is elsewhere. */
  lastSetTravel: number | null;
  /** A button's last state, so a press acts once. */
  pressed: boolean;
}

export const FRESH_CONTROL: ControlMemory = Object.freeze({
  engaged: false,
  lastPosition: null,
  lastSetTravel: null,
  pressed: false,
});

/** How close (in travel) an absolute control must come to take the value over: a 7-bit control's step and a half. */
export const PICKUP_TRAVEL = 1.5 / 127;
/**
 * The largest move between two messages counted as turning across the value: a real knob sends
 * every few steps of its 127 even when turned fast; a larger jump is a control read wrongly.
 */
export const MAX_CROSSING_MOVE = 0.25;
/** Fine mode: the value moves this fraction of an absolute control's movement. */
export const FINE_RATIO = 0.1;
const SAME_TRAVEL = 1e-9;

/** Which of the knob's step sizes a relative detent takes (fine and coarse are held modifiers; fine wins). */
export type Precision = 'fine' | 'normal' | 'coarse';

export interface ContinuousTurn {
  /** The new value, or null when the reading leaves it where it is. */
  value: number | null;
  memory: ControlMemory;
  /** Waiting for soft takeover: where the control is and where the value is, both as travel. */
  pickup: { position: number; knobTravel: number } | null;
}

export function turnContinuous(
  scale: KnobScale,
  current: number,
  reading: ControlReading,
  precision: Precision,
  memory: ControlMemory,
): ContinuousTurn {
  if ('steps' in reading) {
    const next =
      reading.steps === 0 ? current : stepValue(scale, current, reading.steps * travelPerStep(scale, precision));
    return { value: next === current ? null : next, memory, pickup: null };
  }
  if (!('absolute' in reading)) return { value: null, memory, pickup: null };
  const position = reading.absolute;
  const knobTravel = valueToTravel(scale, current);
  if (precision === 'fine') {
    const moved = memory.lastPosition === null ? 0 : (position - memory.lastPosition) * FINE_RATIO;
    const next = moved === 0 ? current : roundForDisplay(travelToValue(scale, knobTravel + moved));
    // leaving fine mode, the control sits away from the value: it picks up again
    return {
      value: next === current ? null : next,
      memory: { ...memory, engaged: false, lastPosition: position, lastSetTravel: null },
      pickup: null,
    };
  }
  const movedElsewhere = memory.lastSetTravel !== null && Math.abs(knobTravel - memory.lastSetTravel) > SAME_TRAVEL;
  let engaged = memory.engaged && !movedElsewhere;
  if (!engaged) {
    const near = Math.abs(position - knobTravel) <= PICKUP_TRAVEL;
    const last = memory.lastPosition;
    const crossed =
      last !== null &&
      Math.abs(position - last) <= MAX_CROSSING_MOVE &&
      (last - knobTravel) * (position - knobTravel) <= 0;
    engaged = near || crossed;
  }
  if (!engaged)
    return {
      value: null,
      memory: { ...memory, engaged: false, lastPosition: position, lastSetTravel: null },
      pickup: { position, knobTravel },
    };
  const next = roundForDisplay(travelToValue(scale, position));
  return {
    value: next === current ? null : next,
    memory: { ...memory, engaged: true, lastPosition: position, lastSetTravel: valueToTravel(scale, next) },
    pickup: null,
  };
}

function travelPerStep(scale: KnobScale, precision: Precision): number {
  return precision === 'fine' ? scale.fineTravel : precision === 'coarse' ? scale.coarseTravel : scale.stepTravel;
}

/** The choice (of `count`) a reading picks from `current`, or null when it stays. */
export function choose(
  count: number,
  current: number,
  reading: ControlReading,
  memory: ControlMemory,
): { index: number | null; memory: ControlMemory } {
  if ('absolute' in reading) {
    const slice = (position: number) => Math.min(count - 1, Math.floor(position * count));
    const index = slice(reading.absolute);
    // the first position only says where the control is; a choice is made by moving into another slice
    const moved = memory.lastPosition !== null && slice(memory.lastPosition) !== index;
    return {
      index: moved && index !== current ? index : null,
      memory: { ...memory, lastPosition: reading.absolute },
    };
  }
  if ('steps' in reading) {
    const index = Math.min(count - 1, Math.max(0, current + Math.sign(reading.steps)));
    return { index: index === current ? null : index, memory };
  }
  const { pressedNow, memory: next } = press(reading, memory);
  return { index: pressedNow ? (current + 1) % count : null, memory: next };
}

/**
 * A button's reading: whether it was pressed just now (an edge) and whether it is held. A relative
 * encoder's detent is a momentary press; a trigger (an absolute control resting at 0) is held past
 * half its travel. A stick or a pitch bend, which rest at the middle, are never bound to a press
 * (bindings.ts).
 */
export function press(
  reading: ControlReading,
  memory: ControlMemory,
): { pressedNow: boolean; held: boolean; memory: ControlMemory } {
  if ('steps' in reading)
    return { pressedNow: reading.steps !== 0, held: false, memory: { ...memory, pressed: false } };
  const held = 'pressed' in reading ? reading.pressed : reading.absolute >= 0.5;
  return { pressedNow: held && !memory.pressed, held, memory: { ...memory, pressed: held } };
}
