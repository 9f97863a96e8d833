/**
 * Issue 32: what a hardware control does to its knob. Soft takeover, fine steps and the log travel
 * of wn, against values worked out by hand from the knob scales.
 */
import { describe, expect, it } from 'vitest';
import {
  FINE_RATIO,
  FRESH_CONTROL,
  MAX_CROSSING_MOVE,
  PICKUP_TRAVEL,
  choose,
  press,
  turnContinuous,
  type ControlMemory,
  type Precision,
} from '../../../src-renderer/lib/hardware/bound-control';
import { DESK_KNOB_SCALES, roundForDisplay, travelToValue, valueToTravel } from '../../../src-renderer/lib/knob-scale';

const zeta = DESK_KNOB_SCALES.zeta;
const wn = DESK_KNOB_SCALES.wnRadPerSec;

/** Feeds absolute positions to a knob starting at `value`, as the desk would; returns the values it took. */
function sweep(
  start: number,
  positions: number[],
  precision: Precision = 'normal',
): { values: number[]; memory: ControlMemory } {
  let value = start;
  let memory = FRESH_CONTROL;
  const values: number[] = [];
  for (const position of positions) {
    const turn = turnContinuous(zeta, value, { absolute: position }, precision, memory);
    memory = turn.memory;
    if (turn.value !== null) value = turn.value;
    values.push(value);
  }
  return { values, memory };
}

describe('soft takeover of an absolute control', () => {
  const knobAt = travelToValue(zeta, 0.5);

  it('leaves the value until the control reaches it, then follows', () => {
    const { values } = sweep(knobAt, [0.1, 0.2, 0.45, 0.5 - PICKUP_TRAVEL / 2, 0.6]);
    expect(values.slice(0, 3)).toEqual([knobAt, knobAt, knobAt]);
    expect(values[3]).toBe(roundForDisplay(travelToValue(zeta, 0.5 - PICKUP_TRAVEL / 2)));
    expect(values[4]).toBe(roundForDisplay(travelToValue(zeta, 0.6)));
  });

  it('takes over when the control jumps across the value (a fast turn skips it)', () => {
    const { values } = sweep(knobAt, [0.4, 0.6]);
    expect(values).toEqual([knobAt, roundForDisplay(travelToValue(zeta, 0.6))]);
  });

  it('says where the control is and where the value is while it waits', () => {
    const turn = turnContinuous(zeta, knobAt, { absolute: 0.1 }, 'normal', FRESH_CONTROL);
    expect(turn.value).toBeNull();
    expect(turn.pickup).toEqual({ position: 0.1, knobTravel: valueToTravel(zeta, knobAt) });
  });

  it('lets go when another hand moves the value, and picks it up again where it now is', () => {
    const { memory } = sweep(knobAt, [0.5, 0.6]);
    const moved = travelToValue(zeta, 0.3); // the mouse turned the knob meanwhile
    const after = turnContinuous(zeta, moved, { absolute: 0.62 }, 'normal', memory);
    expect(after.value).toBeNull();
    expect(after.pickup).not.toBeNull();
    const nearer = turnContinuous(zeta, moved, { absolute: 0.4 }, 'normal', after.memory);
    expect(nearer.value).toBeNull();
    const crossing = turnContinuous(zeta, moved, { absolute: 0.25 }, 'normal', nearer.memory);
    expect(crossing.value).toBe(roundForDisplay(travelToValue(zeta, 0.25)));
  });
});

describe('takeover against a control read wrongly', () => {
  it('a jump across the value no knob makes between two messages does not take it over', () => {
    // a relative encoder (1 up, 127 down) read as absolute: 1, 1, 127 is not a turn across the range
    const knobAt = travelToValue(zeta, 0.5);
    expect(sweep(knobAt, [1 / 127, 1 / 127, 1]).values).toEqual([knobAt, knobAt, knobAt]);
    expect(MAX_CROSSING_MOVE).toBeLessThan(0.5);
  });
});

describe('fine steps', () => {
  it('an absolute control moves the value by a tenth of its own movement, from where the value is', () => {
    const start = travelToValue(zeta, 0.5);
    const first = turnContinuous(zeta, start, { absolute: 0.1 }, 'fine', FRESH_CONTROL);
    expect(first.value).toBeNull(); // the first position only sets where the control is
    const second = turnContinuous(zeta, start, { absolute: 0.3 }, 'fine', first.memory);
    expect(second.value).toBe(roundForDisplay(travelToValue(zeta, 0.5 + 0.2 * FINE_RATIO)));
    // leaving fine mode, the control is at 0.3 and the value near 0.52: it must pick up again
    const coarse = turnContinuous(zeta, second.value!, { absolute: 0.31 }, 'normal', second.memory);
    expect(coarse.value).toBeNull();
    expect(coarse.pickup).not.toBeNull();
  });

  it("a relative encoder steps the knob's step per detent, or its fine step", () => {
    // zeta's step is 0.01 and its fine step 0.001 (KnobsPanel's keys do the same)
    expect(turnContinuous(zeta, 0.7, { steps: 3 }, 'normal', FRESH_CONTROL).value).toBeCloseTo(0.73, 12);
    expect(turnContinuous(zeta, 0.7, { steps: -2 }, 'fine', FRESH_CONTROL).value).toBeCloseTo(0.698, 12);
    expect(turnContinuous(zeta, 0.7, { steps: 0 }, 'normal', FRESH_CONTROL).value).toBeNull();
    // coarse: the PageUp step, 0.1
    expect(turnContinuous(zeta, 0.7, { steps: 1 }, 'coarse', FRESH_CONTROL).value).toBeCloseTo(0.8, 12);
  });

  it('wn travels logarithmically from hardware as on screen: a detent is a factor of 10^(3 x 0.01)', () => {
    const next = turnContinuous(wn, 6, { steps: 1 }, 'normal', FRESH_CONTROL).value!;
    expect(next / 6).toBeCloseTo(10 ** 0.03, 3);
    const fine = turnContinuous(wn, 6, { steps: 1 }, 'fine', FRESH_CONTROL).value!;
    expect(fine / 6).toBeCloseTo(10 ** 0.003, 3);
    // an absolute control at mid travel is the geometric mean of the range, sqrt(0.1 x 100)
    const mid = turnContinuous(wn, 3, { absolute: 0.5 }, 'normal', { ...FRESH_CONTROL, lastPosition: 0.45 });
    expect(mid.value).toBe(roundForDisplay(Math.sqrt(10)));
  });
});

describe('choices and buttons', () => {
  it('a position picks a variant by moving into its slice, a detent steps one (clamped), a press advances (wrapping)', () => {
    const seen = choose(3, 0, { absolute: 0.5 }, FRESH_CONTROL);
    expect(seen.index).toBeNull(); // where the control is, not a choice
    expect(choose(3, 0, { absolute: 0.55 }, seen.memory).index).toBeNull(); // still in the middle slice
    expect(choose(3, 0, { absolute: 0.99 }, seen.memory).index).toBe(2);
    expect(choose(3, 2, { absolute: 1 }, { ...FRESH_CONTROL, lastPosition: 0.5 }).index).toBeNull();
    expect(choose(3, 1, { steps: -5 }, FRESH_CONTROL).index).toBe(0);
    expect(choose(3, 2, { steps: 1 }, FRESH_CONTROL).index).toBeNull();
    const pressed = choose(3, 2, { pressed: true }, FRESH_CONTROL);
    expect(pressed.index).toBe(0);
    expect(choose(3, 0, { pressed: true }, pressed.memory).index).toBeNull(); // still held: no second press
  });

  it('a press acts once, on its edge; a detent is a momentary press', () => {
    const down = press({ pressed: true }, FRESH_CONTROL);
    expect([down.pressedNow, down.held]).toEqual([true, true]);
    const held = press({ pressed: true }, down.memory);
    expect([held.pressedNow, held.held]).toEqual([false, true]);
    const up = press({ pressed: false }, held.memory);
    expect([up.pressedNow, up.held]).toEqual([false, false]);
    expect(press({ steps: 1 }, held.memory).pressedNow).toBe(true);
  });
});
