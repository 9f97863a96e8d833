/**
 * The MIDI channel messages a hardware knob sends, read from the bytes of a Web MIDI
 * `midimessage` event (MIDI 1.0 Detailed Specification, section 4: the status byte's high nibble
 * is the message, its low nibble the channel). Only what a control surface sends for a knob,
 * fader, wheel or button is read; everything else (system exclusive, clock, aftertouch, program
 * change, a truncated or malformed message) is null, so no byte a device sends can throw.
 */
export type MidiControlKind = 'cc' | 'note' | 'pitch';

export interface MidiControlMessage {
  kind: MidiControlKind;
  /** 1-16, as devices and manuals number them. */
  channel: number;
  /** The controller or note number (0-127); 0 for pitch bend, which has one per channel. */
  number: number;
  /** 0-127 (controller value, note velocity; a note off is 0), or 0-16383 for pitch bend. */
  value: number;
}

const CONTROL_CHANGE = 0xb0;
const NOTE_ON = 0x90;
const NOTE_OFF = 0x80;
const PITCH_BEND = 0xe0;

/** The largest value of each kind: 7 bits, or 14 for pitch bend (LSB first, then MSB). */
export const MIDI_VALUE_MAX: Readonly<Record<MidiControlKind, number>> = Object.freeze({
  cc: 127,
  note: 127,
  pitch: 16383,
});

/** Reads one message; null for anything that is not a knob's, a fader's or a button's. */
export function readMidiControl(bytes: ArrayLike<number> | null | undefined): MidiControlMessage | null {
  if (bytes === null || bytes === undefined || bytes.length !== 3) return null;
  const status = bytes[0]!;
  const data1 = bytes[1]!;
  const data2 = bytes[2]!;
  // a data byte has its top bit clear; a status byte has it set
  const isData = (byte: number) => Number.isInteger(byte) && byte >= 0 && byte <= 0x7f;
  if (!Number.isInteger(status) || status < 0x80 || status > 0xff || !isData(data1) || !isData(data2)) return null;
  const message = status & 0xf0;
  const channel = (status & 0x0f) + 1;
  switch (message) {
    case CONTROL_CHANGE:
      return { kind: 'cc', channel, number: data1, value: data2 };
    case NOTE_ON:
      return { kind: 'note', channel, number: data1, value: data2 };
    case NOTE_OFF:
      return { kind: 'note', channel, number: data1, value: 0 };
    case PITCH_BEND:
      return { kind: 'pitch', channel, number: 0, value: (data2 << 7) | data1 };
    default:
      return null;
  }
}
