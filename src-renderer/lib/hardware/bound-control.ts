import { roundForDisplay, stepValue, travelToValue, valueToTravel, type KnobScale } from '../knob-scale';
import type { ControlReading } from './encoder';

/**
 * What a hardware control's reading does to the value it is bound to. Pure, with the control's
 * memory passed in and returned (ControlMemory), so the desk's state module only stores it.
 *
 * A continuous knob (zeta, wn, tau) moves through the on-screen knob's own scale (knob-scale.ts),
 * so wn travels logarithmically from hardware as on screen:
 * - a relative encoder steps the knob's travel by its step per detent, or its fine step;
 * - an absolute control sets the travel, with soft takeover: after binding, after fine mode and
 *   after the value moved by another hand (the mouse, the tuner, an import), the control takes the
 *   value over only once it reaches it (within PICKUP_TRAVEL) or crosses it, so the value never
 *   jumps to where the hardware happens to sit (the "pickup" of DJ and lighting desks);
 * - in fine mode an absolute control moves the value by a tenth of its own movement (FINE_RATIO),
 *   from where the value is.
 * A choice (the variant) is picked by position, stepped one at a time by a relative encoder, or
 * advanced by a button. An action (play/pause) and the fine modifier follow a button's press.
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
/** Fine mode: the value moves this fraction of an absolute control's movement. */
export const FINE_RATIO = 0.1;
const SAME_TRAVEL = 1e-9;

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
  fine: boolean,
  memory: ControlMemory,
): ContinuousTurn {
  if ('steps' in reading) {
    const next = reading.steps === 0 ? current : stepValue(scale, current, reading.steps * travelPerStep(scale, fine));
    // a relative control needs no takeover; an absolute one bound to the same knob would have to pick up again
    return { value: next === current ? null : next, memory, pickup: null };
  }
  if (!('absolute' in reading)) return { value: null, memory, pickup: null };
  const position = reading.absolute;
  const knobTravel = valueToTravel(scale, current);
  if (fine) {
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
    const crossed = memory.lastPosition !== null && (memory.lastPosition - knobTravel) * (position - knobTravel) <= 0;
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

function travelPerStep(scale: KnobScale, fine: boolean): number {
  return fine ? scale.fineTravel : scale.stepTravel;
}

/** The choice (of `count`) a reading picks from `current`, or null when it stays. */
export function choose(
  count: number,
  current: number,
  reading: ControlReading,
  memory: ControlMemory,
): { index: number | null; memory: ControlMemory } {
  let index = current;
  if ('absolute' in reading) index = Math.min(count - 1, Math.floor(reading.absolute * count));
  else if ('steps' in reading) index = Math.min(count - 1, Math.max(0, current + Math.sign(reading.steps)));
  else {
    const { pressedNow, memory: next } = press(reading, memory);
    return { index: pressedNow ? (current + 1) % count : null, memory: next };
  }
  return { index: index === current ? null : index, memory };
}

/**
 * A button's reading: whether it was pressed just now (an edge) and whether it is held. A relative
 * encoder's detent is a momentary press; an absolute control is held past half its travel.
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
