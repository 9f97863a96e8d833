/**
 * Issue 32: the desk's hardware knobs state, driven through a Web MIDI access and a gamepad list
 * of the shapes the browser gives (the end-to-end test drives the real desk in Chromium).
 */
import { describe, expect, it } from 'vitest';
import {
  HardwareKnobs,
  type HardwareHost,
  type MidiAccessLike,
  type MidiInputLike,
} from '../../../src-renderer/lib/desk/hardware-knobs.svelte';
import type { BindingsStore } from '../../../src-renderer/lib/desk/saved-bindings';
import type { Binding } from '../../../src-renderer/lib/hardware/bindings';
import type { PadSnapshot } from '../../../src-renderer/lib/hardware/gamepad';
import { DESK_KNOB_SCALES, roundForDisplay, travelToValue } from '../../../src-renderer/lib/knob-scale';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../../src-shared/gate/gate-settings';

class FakeInput implements MidiInputLike {
  private listener: ((event: { data: Uint8Array | null }) => void) | null = null;
  constructor(readonly name: string) {}
  addEventListener(_type: 'midimessage', listener: (event: { data: Uint8Array | null }) => void): void {
    this.listener = listener;
  }
  send(...bytes: number[]): void {
    this.listener?.({ data: new Uint8Array(bytes) });
  }
}

function rig(saved: Binding[] = []) {
  const input = new FakeInput('Knob Box');
  const access: MidiAccessLike = {
    inputs: { forEach: (callback) => callback(input) },
    addEventListener: () => {},
  };
  let stored = saved;
  const store: BindingsStore = { save: (b) => (stored = [...b]), restore: () => stored };
  const state = { gate: { ...DEFAULT_GATE_SETTINGS } as GateSettings, playing: false, pads: [] as PadSnapshot[] };
  const frames: Array<(timeMs: number) => void> = [];
  const connected: Array<() => void> = [];
  const host: HardwareHost = {
    gate: () => state.gate,
    change: (patch) => (state.gate = { ...state.gate, ...patch }),
    playing: () => state.playing,
    play: () => (state.playing = true),
    pause: () => (state.playing = false),
    store,
    requestMidi: () => Promise.resolve(access),
    gamepads: () => state.pads,
    frames: { request: (callback) => frames.push(callback), cancel: () => {} },
    watchPads: (callback) => {
      connected.push(callback);
      return () => connected.splice(connected.indexOf(callback), 1);
    },
  };
  const tick = (timeMs: number) => frames.splice(0).forEach((callback) => callback(timeMs));
  return { input, state, host, tick, frames, connected, stored: () => stored };
}

describe('hardware knobs in the desk', () => {
  it('learns a control, applies it with soft takeover, and keeps the binding for the next desk', async () => {
    const { input, state, host, stored } = rig();
    const hardware = new HardwareKnobs(host);
    await hardware.connectMidi();
    expect(hardware.inputs).toEqual(['Knob Box']);
    hardware.learn('zeta');
    input.send(0xb0, 21, 5); // far from zeta 0.7 (travel 0.22): bound, not taken over
    expect(hardware.bindingOf('zeta')?.source).toEqual({
      device: 'midi',
      input: 'Knob Box',
      kind: 'cc',
      channel: 1,
      number: 21,
    });
    expect(hardware.learning).toBeNull();
    expect(state.gate.zeta).toBe(DEFAULT_GATE_SETTINGS.zeta);
    expect(hardware.pickups.zeta).toBeDefined();
    input.send(0xb0, 21, 20);
    expect(state.gate.zeta).toBe(DEFAULT_GATE_SETTINGS.zeta);
    input.send(0xb0, 21, 35); // across the value: taken over
    expect(state.gate.zeta).toBe(roundForDisplay(travelToValue(DESK_KNOB_SCALES.zeta, 35 / 127)));
    expect(hardware.pickups.zeta).toBeUndefined();
    // another control on the input is heard but drives nothing
    input.send(0xb0, 22, 60);
    expect(hardware.lastHeard).toMatch(/CC 22, channel 1 = 60 \(not bound\)/);

    const next = new HardwareKnobs(host);
    expect(stored()).toHaveLength(1);
    expect(next.bindingOf('zeta')?.encoding).toBe('absolute');
  });

  it('reads a relative encoder, holds fine steps with a second control, and plays and pauses', async () => {
    const { input, state, host } = rig();
    const hardware = new HardwareKnobs(host);
    await hardware.connectMidi();
    hardware.learn('wnRadPerSec');
    input.send(0xb0, 30, 1);
    hardware.setEncoding('wnRadPerSec', 'relative-twos-complement');
    const wn = state.gate.wnRadPerSec;
    input.send(0xb0, 30, 127); // one detent anticlockwise
    expect(state.gate.wnRadPerSec / wn).toBeCloseTo(10 ** -0.03, 3);
    hardware.learn('fine');
    input.send(0x90, 36, 100); // a pad: held down
    expect(hardware.fine).toBe(true);
    const before = state.gate.wnRadPerSec;
    input.send(0xb0, 30, 1);
    expect(state.gate.wnRadPerSec / before).toBeCloseTo(10 ** 0.003, 4);
    input.send(0x80, 36, 0);
    expect(hardware.fine).toBe(false);
    hardware.learn('coarse');
    input.send(0x90, 38, 100);
    const normal = state.gate.wnRadPerSec;
    input.send(0xb0, 30, 1);
    expect(state.gate.wnRadPerSec / normal).toBeCloseTo(10 ** 0.3, 2); // the PageUp step: 0.1 of log travel
    input.send(0x90, 38, 0);
    hardware.learn('playPause');
    input.send(0x90, 37, 127);
    expect(state.playing).toBe(true);
    input.send(0x90, 37, 0);
    input.send(0x90, 37, 127);
    expect(state.playing).toBe(false);
    // a note cannot turn a knob: learning zeta from one binds nothing
    hardware.learn('zeta');
    input.send(0x90, 40, 100);
    expect(hardware.bindingOf('zeta')).toBeNull();
    expect(hardware.learning).toBe('zeta');
  });

  it('refuses a file that is not a bindings file, naming the field, and keeps the bindings it has', () => {
    const { host } = rig([
      {
        target: 'variant',
        source: { device: 'midi', input: 'Knob Box', kind: 'cc', channel: 2, number: 1 },
        encoding: 'absolute',
      },
    ]);
    const hardware = new HardwareKnobs(host);
    hardware.importText(
      '{"kind":"knob-studio.hardware-bindings","version":1,"bindings":[{"target":"gain"}]}',
      'mine.json',
    );
    expect(hardware.importError).toMatch(/^mine\.json is not a bindings file: bindings\.0\./);
    hardware.importText('not json', 'mine.json');
    expect(hardware.importError).toMatch(/mine\.json: not valid JSON/);
    expect(hardware.bindings).toHaveLength(1);
    hardware.importText(hardware.exportText(), 'again.json');
    expect(hardware.importError).toBeNull();
    expect(hardware.bindingOf('variant')?.source).toMatchObject({ channel: 2, number: 1 });
  });

  it('learns a gamepad stick and jogs the knob from it, frame by frame', () => {
    const { state, host, tick } = rig();
    const hardware = new HardwareKnobs(host);
    state.pads = [{ id: 'Pad', axes: [0, 0], buttons: [] }];
    hardware.learn('zeta');
    state.pads = [{ id: 'Pad', axes: [0, 0.9], buttons: [] }];
    tick(0);
    expect(hardware.bindingOf('zeta')?.source).toEqual({
      device: 'gamepad',
      gamepad: 'Pad',
      control: 'axis',
      index: 1,
    });
    expect(hardware.bindingOf('zeta')?.encoding).toBe('jog');
    const start = state.gate.zeta;
    state.pads = [{ id: 'Pad', axes: [0, 1], buttons: [] }];
    for (let ms = 0; ms <= 500; ms += 50) tick(ms);
    // half a second at full deflection: 20 steps of 0.01
    expect(state.gate.zeta - start).toBeCloseTo(0.2, 6);
    state.pads = [{ id: 'Pad', axes: [0, 0.05], buttons: [] }];
    const held = state.gate.zeta;
    for (let ms = 550; ms <= 1000; ms += 50) tick(ms);
    expect(state.gate.zeta).toBe(held);
  });

  it('learns the control that moved on a pad first seen while learning, not one resting away from 0', () => {
    const { state, host, tick } = rig();
    const hardware = new HardwareKnobs(host);
    hardware.learn('wnRadPerSec'); // no pad yet: Chromium shows one only once it is touched
    // a trigger on axis 2 rests at -1; the operator pushes the stick on axis 3
    state.pads = [{ id: 'Pad', axes: [0, 0, -1, 0.1], buttons: [] }];
    tick(0);
    expect(hardware.bindingOf('wnRadPerSec')).toBeNull();
    state.pads = [{ id: 'Pad', axes: [0, 0, -1, 0.9], buttons: [] }];
    tick(16);
    expect(hardware.bindingOf('wnRadPerSec')?.source).toMatchObject({ control: 'axis', index: 3 });
  });

  it('a stick at rest does not hold the variant against the mouse; a stick cannot press play', () => {
    const { state, host, tick } = rig([
      {
        target: 'variant',
        source: { device: 'gamepad', gamepad: 'Pad', control: 'axis', index: 0 },
        encoding: 'absolute',
      },
    ]);
    const hardware = new HardwareKnobs(host);
    state.pads = [{ id: 'Pad', axes: [0], buttons: [] }];
    tick(0);
    state.gate = { ...state.gate, variant: 'instant' }; // the mouse picks Knob-IA
    for (let ms = 16; ms < 200; ms += 16) tick(ms);
    expect(state.gate.variant).toBe('instant');
    state.pads = [{ id: 'Pad', axes: [0.95], buttons: [] }]; // pushed into the last slice
    tick(200);
    expect(state.gate.variant).toBe('second-order');
    hardware.learn('playPause');
    state.pads = [{ id: 'Pad', axes: [-0.95], buttons: [] }];
    tick(216);
    tick(232);
    expect(hardware.bindingOf('playPause')).toBeNull();
    expect(state.playing).toBe(false);
  });

  it('stops polling while no gamepad is connected, and starts again when one connects', () => {
    const { state, host, tick, frames, connected } = rig([
      { target: 'zeta', source: { device: 'gamepad', gamepad: 'Pad', control: 'axis', index: 1 }, encoding: 'jog' },
    ]);
    const hardware = new HardwareKnobs(host);
    expect(frames).toHaveLength(1);
    tick(0); // no pad: no next frame asked for
    expect(frames).toHaveLength(0);
    state.pads = [{ id: 'Pad', axes: [0, 0], buttons: [] }];
    connected.forEach((callback) => callback());
    expect(frames).toHaveLength(1);
    hardware.dispose();
    expect(connected).toHaveLength(0);
  });
});
