/** Issue 32: gamepad sticks as jogs and positions, and the bindings file's schema. */
import { describe, expect, it } from 'vitest';
import { BindingsFileSchema, encodingsFor, type Binding } from '../../../src-renderer/lib/hardware/bindings';
import {
  JOG_DEAD_ZONE,
  JOG_STEPS_PER_SECOND,
  jogSteps,
  movedControl,
  readPad,
  wholeSteps,
} from '../../../src-renderer/lib/hardware/gamepad';
import { describeIssues } from '../../../src-shared/zod-issues';

describe('gamepad', () => {
  it('a jog does nothing inside the dead zone and turns at the full rate at full deflection', () => {
    expect(jogSteps(JOG_DEAD_ZONE, 1)).toBe(0);
    expect(jogSteps(-0.1, 1)).toBe(0);
    expect(jogSteps(1, 0.5)).toBeCloseTo(JOG_STEPS_PER_SECOND / 2, 12);
    expect(jogSteps(-1, 0.25)).toBeCloseTo(-JOG_STEPS_PER_SECOND / 4, 12);
    // half way between the dead zone and full deflection: half the rate
    expect(jogSteps((1 + JOG_DEAD_ZONE) / 2, 1)).toBeCloseTo(JOG_STEPS_PER_SECOND / 2, 12);
    expect(jogSteps(Number.NaN, 1)).toBe(0);
  });

  it('carries fractional steps until they make a whole one', () => {
    let carried = 0;
    const taken: number[] = [];
    for (let i = 0; i < 5; i++) {
      const next = wholeSteps(carried, 0.3);
      carried = next.carried;
      taken.push(next.steps);
    }
    expect(taken).toEqual([0, 0, 0, 1, 0]);
    expect(wholeSteps(0, -1.5)).toEqual({ steps: -1, carried: -0.5 });
  });

  it('reads a stick or trigger as a position and learns the control that moved', () => {
    const pad = { id: 'pad', axes: [0.02, -1], buttons: [{ pressed: false, value: 0.25 }] };
    expect(readPad(pad, { device: 'gamepad', gamepad: 'pad', control: 'axis', index: 1 })).toEqual({ absolute: 0 });
    expect(readPad(pad, { device: 'gamepad', gamepad: 'pad', control: 'button', index: 0 })).toEqual({
      absolute: 0.25,
    });
    expect(readPad(pad, { device: 'gamepad', gamepad: 'pad', control: 'axis', index: 5 })).toBeNull();
    const rest = { id: 'pad', axes: [0.02, 0], buttons: [{ pressed: false, value: 0 }] };
    expect(movedControl(pad, rest)).toEqual({ control: 'axis', index: 1 });
    expect(movedControl(rest, rest)).toBeNull();
    const pressed = { ...rest, buttons: [{ pressed: true, value: 1 }] };
    expect(movedControl(pressed, rest)).toEqual({ control: 'button', index: 0 });
  });
});

describe('the bindings file', () => {
  const zeta: Binding = {
    target: 'zeta',
    source: { device: 'midi', input: 'Arturia BeatStep', kind: 'cc', channel: 1, number: 21 },
    encoding: 'relative-twos-complement',
  };
  const file = (bindings: unknown[]) => ({ kind: 'knob-studio.hardware-bindings', version: 1, bindings });
  const issues = (value: unknown) => {
    const parsed = BindingsFileSchema.safeParse(value);
    return parsed.success ? null : describeIssues(parsed.error.issues);
  };

  it('reads a file of bindings', () => {
    expect(issues(file([zeta]))).toBeNull();
  });

  it('refuses a target bound twice, an encoding the control cannot have, and what is not a binding', () => {
    expect(issues(file([zeta, { ...zeta, source: { ...zeta.source, number: 22 } }]))).toMatch(/bound twice/);
    // a note cannot turn a knob; a pitch bend is a position
    const note = { ...zeta, source: { ...zeta.source, kind: 'note' }, encoding: 'button' };
    expect(issues(file([note]))).toMatch(/^bindings\.0\.encoding: /);
    const pitch = { ...zeta, source: { ...zeta.source, kind: 'pitch', number: 0 } };
    expect(issues(file([pitch]))).toMatch(/^bindings\.0\.encoding: /);
    expect(issues(file([{ ...zeta, source: { ...zeta.source, channel: 17 } }]))).toMatch(
      /bindings\.0\.source\.channel/,
    );
    expect(issues({ ...file([zeta]), knobs: { zeta: 1 } })).toMatch(/knobs/);
    expect(issues(file([zeta, { ...zeta, target: 'tauSeconds' }]))).toMatch(/a control is bound to two targets/);
    const pitchAt = (number: number) => ({
      ...zeta,
      source: { ...zeta.source, kind: 'pitch', number },
      encoding: 'absolute',
    });
    expect(issues(file([pitchAt(0)]))).toBeNull();
    expect(issues(file([pitchAt(1)]))).toMatch(/bindings\.0\.source\.number: a pitch bend has number 0/);
    expect(issues({ ...file([zeta]), kind: 'knob-studio.settings' })).toMatch(/^kind: /);
  });

  it('offers each control the encodings that make sense for its target', () => {
    const cc = { device: 'midi', input: 'Arturia BeatStep', kind: 'cc', channel: 1, number: 21 } as const;
    expect(encodingsFor(cc, 'zeta')).toContain('absolute');
    expect(encodingsFor(cc, 'zeta')).not.toContain('button');
    expect(encodingsFor({ ...cc, kind: 'note' }, 'wnRadPerSec')).toEqual([]);
    expect(encodingsFor({ ...cc, kind: 'note' }, 'playPause')).toEqual(['button']);
    expect(encodingsFor(cc, 'playPause')[0]).toBe('button');
    const stick = { device: 'gamepad', gamepad: 'p', control: 'axis', index: 0 } as const;
    expect(encodingsFor(stick, 'zeta')[0]).toBe('jog');
    // a stick and a pitch bend rest at the middle: they press nothing
    expect(encodingsFor(stick, 'playPause')).toEqual([]);
    expect(encodingsFor({ ...cc, kind: 'pitch', number: 0 }, 'fine')).toEqual([]);
    // the modifiers are held: only a button holds them
    expect(encodingsFor(cc, 'fine')).toEqual(['button']);
    expect(encodingsFor(cc, 'coarse')).toEqual(['button']);
  });
});
