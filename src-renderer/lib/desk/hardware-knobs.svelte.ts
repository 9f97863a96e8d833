import { KnobError } from '../../../src-shared/errors';
import { GATE_VARIANTS, type GateSettings } from '../../../src-shared/gate/gate-settings';
import {
  TARGET_KINDS,
  controlName,
  defaultEncoding,
  encodingsFor,
  readBindingsFile,
  sameSource,
  type Binding,
  type ControlSource,
  type HardwareTarget,
} from '../hardware/bindings';
import {
  FRESH_CONTROL,
  choose,
  press,
  turnContinuous,
  type ControlMemory,
  type Precision,
} from '../hardware/bound-control';
import { readControl, type ControlReading, type Encoding } from '../hardware/encoder';
import { jogSteps, movedControl, readPad, snapshotOf, wholeSteps, type PadSnapshot } from '../hardware/gamepad';
import { MIDI_VALUE_MAX, readMidiControl } from '../hardware/midi-message';
import { DESK_KNOB_SCALES } from '../knob-scale';
import { bindingsFileText, type BindingsStore } from './saved-bindings';

/**
 * Hardware knobs: MIDI controllers (Web MIDI, without system exclusive) and gamepads bound to the
 * knobs by learning (turn a control while its target waits), each control read under its encoding
 * and applied through the bound-control rules (soft takeover, fine steps, wn's log travel). A
 * control's value goes to the knobs the way an on-screen turn does (`change`: shown at once, sent
 * latest-wins), so a hardware turn reaches the gate within the frame it arrives in.
 */

/** The parts of Web MIDI read here (MIDIAccess, MIDIInput), so a test can hand in its own. */
export interface MidiInputLike {
  readonly name: string | null;
  addEventListener(type: 'midimessage', listener: (event: { data: Uint8Array | null }) => void): void;
}
export interface MidiAccessLike {
  readonly inputs: { forEach(callback: (input: MidiInputLike) => void): void };
  addEventListener(type: 'statechange', listener: () => void): void;
}

export interface HardwareHost {
  gate(): GateSettings;
  change(patch: Partial<GateSettings>): void;
  playing(): boolean;
  play(): void;
  pause(): void;
  store: BindingsStore;
  /** Web MIDI's access request, or null where the browser has none. */
  requestMidi: (() => Promise<MidiAccessLike>) | null;
  /** The Gamepad API's pads, or null where the browser has none. */
  gamepads: (() => ReadonlyArray<PadSnapshot | null>) | null;
  /** The animation frames gamepads are polled on. */
  frames: { request(callback: (timeMs: number) => void): number; cancel(handle: number): void };
  /** Calls back when a gamepad connects (polling stops while none is there); returns the unsubscribe. */
  watchPads(connected: () => void): () => void;
}

export type MidiStatus = 'off' | 'connecting' | 'on' | 'unavailable';

/** The browser's Web MIDI and Gamepad API, when it has them (no system exclusive is ever asked for). */
export function browserHardware(): Pick<HardwareHost, 'requestMidi' | 'gamepads' | 'frames' | 'watchPads'> {
  const nav = typeof navigator === 'undefined' ? null : navigator;
  return {
    requestMidi:
      nav !== null && typeof nav.requestMIDIAccess === 'function'
        ? () => nav.requestMIDIAccess({ sysex: false }) as Promise<MidiAccessLike>
        : null,
    gamepads:
      nav !== null && typeof nav.getGamepads === 'function'
        ? () => nav.getGamepads().map((pad) => (pad === null ? null : snapshotOf(pad)))
        : null,
    frames: {
      request: (callback) => requestAnimationFrame(callback),
      cancel: (handle) => cancelAnimationFrame(handle),
    },
    watchPads: (connected) => {
      if (typeof window === 'undefined') return () => {};
      window.addEventListener('gamepadconnected', connected);
      return () => window.removeEventListener('gamepadconnected', connected);
    },
  };
}

export class HardwareKnobs {
  bindings = $state.raw<Binding[]>([]);
  /** The target waiting for a control to be turned (MIDI-learn), or null. */
  learning = $state<HardwareTarget | null>(null);
  midi = $state<MidiStatus>('off');
  midiError = $state<string | null>(null);
  /** The MIDI inputs connected now, by name. */
  inputs = $state.raw<string[]>([]);
  /** Fine steps latched on by the operator (the checkbox); a bound fine control or Shift holds them. */
  fineLatched = $state(false);
  fineHeld = $state(false);
  shiftHeld = $state(false);
  /** A bound coarse control held: relative detents take the knob's PageUp step. */
  coarseHeld = $state(false);
  /** Absolute controls waiting for soft takeover: where each is and where its knob is (travel). */
  pickups = $state.raw<Partial<Record<HardwareTarget, { position: number; knobTravel: number }>>>({});
  /** The last control the desk heard, in words (shows that a device is talking). */
  lastHeard = $state<string | null>(null);
  importError = $state<string | null>(null);

  // what each bound control remembers (bound-control.ts) and a jog's fractional steps: not shown, so not reactive
  private memory: Partial<Record<HardwareTarget, ControlMemory>> = {};
  private jogCarried: Partial<Record<HardwareTarget, number>> = {};
  private readonly listened = new WeakSet<MidiInputLike>();
  private access: MidiAccessLike | null = null;
  private frame: number | null = null;
  private lastFrameMs: number | null = null;
  private learnRest: PadSnapshot[] = [];
  /** Whether a gamepad may be connected: polling stops when a frame finds none, until one connects. */
  private padsPresent = true;
  private readonly unwatchPads: () => void;

  constructor(private readonly host: HardwareHost) {
    this.bindings = host.store.restore();
    this.unwatchPads = host.watchPads(() => {
      this.padsPresent = true;
      this.pollWhenNeeded();
    });
    if (host.requestMidi === null) this.midi = 'unavailable';
    // saved MIDI bindings reconnect by themselves, as the knobs come back after a reload
    if (this.bindings.some((b) => b.source.device === 'midi')) void this.connectMidi();
    this.pollWhenNeeded();
  }

  get fine(): boolean {
    return this.fineLatched || this.fineHeld || this.shiftHeld;
  }

  /** The step a relative detent takes now (fine wins over coarse). */
  get precision(): Precision {
    return this.fine ? 'fine' : this.coarseHeld ? 'coarse' : 'normal';
  }

  bindingOf(target: HardwareTarget): Binding | null {
    return this.bindings.find((b) => b.target === target) ?? null;
  }

  /** Asks for MIDI (no system exclusive) and listens to every input, now and as they are plugged in. */
  async connectMidi(): Promise<void> {
    const request = this.host.requestMidi;
    if (request === null || this.midi === 'connecting' || this.midi === 'on') return;
    this.midi = 'connecting';
    this.midiError = null;
    try {
      const access = await request();
      this.access = access;
      access.addEventListener('statechange', () => this.listenToInputs());
      this.listenToInputs();
      this.midi = 'on';
    } catch (error) {
      this.midi = 'off';
      this.midiError = `MIDI was not allowed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  /** The next control turned (or pressed) binds to `target`; learning again or Escape stops it. */
  learn(target: HardwareTarget | null): void {
    this.learning = this.learning === target ? null : target;
    this.learnRest = this.pads().filter((pad): pad is PadSnapshot => pad !== null);
    if (this.learning !== null && this.midi === 'off') void this.connectMidi();
    this.pollWhenNeeded();
  }

  unbind(target: HardwareTarget): void {
    this.setBindings(this.bindings.filter((b) => b.target !== target));
  }

  setEncoding(target: HardwareTarget, encoding: Encoding): void {
    const binding = this.bindingOf(target);
    if (binding === null || !encodingsFor(binding.source, target).includes(encoding)) return;
    this.setBindings(this.bindings.map((b) => (b.target === target ? { ...b, encoding } : b)));
  }

  /** The bindings file (the bindings and nothing else). */
  exportText(): string {
    return bindingsFileText(this.bindings);
  }

  /** Replaces the bindings with a file's; a file that is not a bindings file changes nothing and says why. */
  importText(text: string, fileName: string): void {
    try {
      this.setBindings(readBindingsFile(text, fileName));
      this.importError = null;
    } catch (error) {
      this.importError = error instanceof KnobError ? error.message : String(error);
    }
  }

  /** A MIDI message from the input named `inputName`. */
  midiMessage(inputName: string, bytes: ArrayLike<number> | null): void {
    const message = readMidiControl(bytes);
    if (message === null) return;
    const source: ControlSource = {
      device: 'midi',
      input: inputName,
      kind: message.kind,
      channel: message.channel,
      number: message.number,
    };
    if (this.learning !== null) {
      // a released note is the end of a press, not a control being chosen
      if (message.kind === 'note' && message.value === 0) return;
      if (!this.bind(this.learning, source)) {
        this.lastHeard = `${describeHeard(source, message.value, null)}: cannot drive ${this.learning}`;
        return;
      }
    }
    const binding = this.bindings.find((b) => sameSource(b.source, source));
    if (binding === undefined) {
      this.lastHeard = describeHeard(source, message.value, null);
      return;
    }
    this.lastHeard = describeHeard(source, message.value, binding.target);
    const reading: ControlReading =
      message.kind === 'note'
        ? { pressed: message.value > 0 }
        : readControl(binding.encoding, message.value, MIDI_VALUE_MAX[message.kind]);
    this.apply(binding.target, reading);
  }

  /** Stops polling and watching for gamepads (the desk's teardown). */
  dispose(): void {
    if (this.frame !== null) this.host.frames.cancel(this.frame);
    this.frame = null;
    this.unwatchPads();
  }

  /** Binds a learnt control; false when it cannot drive the target (a note cannot turn a knob). */
  private bind(target: HardwareTarget, source: ControlSource): boolean {
    const encoding = defaultEncoding(source, target);
    if (encoding === null) return false;
    // a control drives one target: binding it here takes it from any other
    const others = this.bindings.filter((b) => b.target !== target && !sameSource(b.source, source));
    this.learning = null;
    this.setBindings([...others, { target, source, encoding }]);
    return true;
  }

  private setBindings(next: Binding[]): void {
    this.bindings = next;
    this.memory = {};
    this.jogCarried = {};
    this.pickups = {};
    this.host.store.save(next);
    this.pollWhenNeeded();
  }

  private apply(target: HardwareTarget, reading: ControlReading): void {
    const memory = this.memory[target] ?? FRESH_CONTROL;
    const gate = this.host.gate();
    const kind = TARGET_KINDS[target];
    if (kind === 'continuous') {
      const knob = target as 'zeta' | 'wnRadPerSec' | 'tauSeconds';
      const turn = turnContinuous(DESK_KNOB_SCALES[knob], gate[knob], reading, this.precision, memory);
      this.memory[target] = turn.memory;
      const { [target]: _was, ...others } = this.pickups;
      this.pickups = turn.pickup === null ? others : { ...others, [target]: turn.pickup };
      if (turn.value !== null) this.host.change({ [knob]: turn.value });
    } else if (kind === 'choice') {
      const picked = choose(GATE_VARIANTS.length, GATE_VARIANTS.indexOf(gate.variant), reading, memory);
      this.memory[target] = picked.memory;
      if (picked.index !== null) this.host.change({ variant: GATE_VARIANTS[picked.index]! });
    } else {
      const pressed = press(reading, memory);
      this.memory[target] = pressed.memory;
      if (target === 'fine') this.fineHeld = pressed.held;
      else if (target === 'coarse') this.coarseHeld = pressed.held;
      else if (pressed.pressedNow) {
        if (this.host.playing()) this.host.pause();
        else this.host.play();
      }
    }
  }

  private listenToInputs(): void {
    const names: string[] = [];
    this.access?.inputs.forEach((input) => {
      const name = input.name ?? 'unnamed input';
      names.push(name);
      if (this.listened.has(input)) return;
      this.listened.add(input);
      input.addEventListener('midimessage', (event) => this.midiMessage(name, event.data));
    });
    this.inputs = names;
  }

  private pads(): ReadonlyArray<PadSnapshot | null> {
    try {
      return this.host.gamepads?.() ?? [];
    } catch {
      // a page without permission to read gamepads (a policy) reads as none
      return [];
    }
  }

  /** Gamepads are polled once an animation frame while one is bound or a control is being learnt. */
  private pollWhenNeeded(): void {
    const needed =
      this.host.gamepads !== null &&
      (this.learning !== null || (this.padsPresent && this.bindings.some((b) => b.source.device === 'gamepad')));
    if (needed && this.frame === null) this.frame = this.host.frames.request((ms) => this.poll(ms));
    if (!needed && this.frame !== null) {
      this.host.frames.cancel(this.frame);
      this.frame = null;
      this.lastFrameMs = null;
    }
  }

  private poll(timeMs: number): void {
    this.frame = null;
    const dtSeconds = this.lastFrameMs === null ? 0 : Math.min(0.1, (timeMs - this.lastFrameMs) / 1000);
    this.lastFrameMs = timeMs;
    const pads = this.pads().filter((pad): pad is PadSnapshot => pad !== null);
    this.padsPresent = pads.length > 0;
    if (this.learning !== null) {
      for (const pad of pads) {
        const rest = this.learnRest.find((p) => p.id === pad.id);
        // a pad first seen while learning (Chromium shows a pad only once it is touched): this frame is its rest
        if (rest === undefined) {
          this.learnRest.push(pad);
          continue;
        }
        const moved = movedControl(pad, rest);
        if (moved !== null && this.bind(this.learning, { device: 'gamepad', gamepad: pad.id, ...moved })) break;
      }
    }
    for (const binding of this.bindings) {
      const source = binding.source;
      if (source.device !== 'gamepad') continue;
      const pad = pads.find((p) => p.id === source.gamepad);
      if (pad === undefined) continue;
      const reading = this.padReading(binding, pad, dtSeconds);
      if (reading !== null) this.apply(binding.target, reading);
    }
    this.pollWhenNeeded();
  }

  private padReading(binding: Binding, pad: PadSnapshot, dtSeconds: number): ControlReading | null {
    const source = binding.source as Extract<ControlSource, { device: 'gamepad' }>;
    const read = readPad(pad, source);
    if (read === null || !('absolute' in read)) return null;
    if (binding.encoding === 'button') return { pressed: read.absolute >= 0.5 };
    if (binding.encoding !== 'jog') {
      // a held position is read once: polling it again every frame would change nothing
      const last = this.memory[binding.target]?.lastPosition ?? null;
      return last !== null && Math.abs(last - read.absolute) < 1e-6 ? null : read;
    }
    const jog = wholeSteps(this.jogCarried[binding.target] ?? 0, jogSteps(2 * read.absolute - 1, dtSeconds));
    this.jogCarried[binding.target] = jog.carried;
    return jog.steps === 0 ? null : { steps: jog.steps };
  }
}

function describeHeard(source: ControlSource, value: number, target: HardwareTarget | null): string {
  const what = source.device === 'midi' ? `${controlName(source)} = ${value}` : `gamepad ${controlName(source)}`;
  return target === null ? `${what} (not bound)` : `${what} → ${target}`;
}
