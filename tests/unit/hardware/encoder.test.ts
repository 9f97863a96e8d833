/** Issue 32: MIDI messages and the encoders' conventions, against the values the conventions define. */
import { describe, expect, it } from 'vitest';
import { readControl } from '../../../src-renderer/lib/hardware/encoder';
import { readMidiControl } from '../../../src-renderer/lib/hardware/midi-message';

const steps = (encoding: Parameters<typeof readControl>[0], value: number) => {
  const reading = readControl(encoding, value);
  if (!('steps' in reading)) throw new Error(`${encoding} read ${value} as ${JSON.stringify(reading)}`);
  return reading.steps;
};

describe('MIDI channel messages', () => {
  it('reads control change, note on and off, and 14-bit pitch bend with 1-based channels', () => {
    expect(readMidiControl([0xb0, 21, 100])).toEqual({ kind: 'cc', channel: 1, number: 21, value: 100 });
    expect(readMidiControl([0xbf, 7, 0])).toEqual({ kind: 'cc', channel: 16, number: 7, value: 0 });
    expect(readMidiControl([0x92, 60, 90])).toEqual({ kind: 'note', channel: 3, number: 60, value: 90 });
    // note off, and note on at velocity 0 (running-status devices send it for off): both release
    expect(readMidiControl([0x82, 60, 64])).toEqual({ kind: 'note', channel: 3, number: 60, value: 0 });
    expect(readMidiControl([0x92, 60, 0])).toEqual({ kind: 'note', channel: 3, number: 60, value: 0 });
    // pitch bend: LSB first; centre 0x2000
    expect(readMidiControl([0xe0, 0x00, 0x40])).toEqual({ kind: 'pitch', channel: 1, number: 0, value: 8192 });
    expect(readMidiControl([0xe1, 0x7f, 0x7f])).toEqual({ kind: 'pitch', channel: 2, number: 0, value: 16383 });
  });

  it('reads nothing else, and nothing malformed', () => {
    for (const bytes of [
      [0xf0, 0x7e, 0x7f, 0x06, 0x01, 0xf7], // system exclusive
      [0xf8], // clock
      [0xc0, 5], // program change
      [0xd0, 40], // channel pressure
      [0xa0, 60, 40], // polyphonic aftertouch
      [0xb0, 21], // truncated
      [0xb0, 0x80, 1], // a status byte where a data byte belongs
      [21, 100, 0], // no status byte
      [0x1b0, 1, 2], // not a byte
      [176.5, 1, 2],
      [0xb0, -1, 2],
      [],
      null,
      undefined,
    ])
      expect(readMidiControl(bytes as number[] | null | undefined), JSON.stringify(bytes)).toBeNull();
  });
});

describe('encoder conventions', () => {
  it("two's complement: 1-63 clockwise, 127 down to 65 anticlockwise", () => {
    expect([1, 2, 63, 127, 126, 65, 64, 0].map((v) => steps('relative-twos-complement', v))).toEqual([
      1, 2, 63, -1, -2, -63, -64, 0,
    ]);
  });

  it('offset binary: 64 is still, 65 one step clockwise, 63 one anticlockwise', () => {
    expect([64, 65, 66, 63, 62, 127, 0].map((v) => steps('relative-offset-binary', v))).toEqual([
      0, 1, 2, -1, -2, 63, -64,
    ]);
  });

  it('signed bit: bit 6 the sign, bits 0-5 the steps', () => {
    expect([1, 2, 63, 65, 66, 127, 0, 64].map((v) => steps('relative-signed-bit', v))).toEqual([
      1, 2, 63, -1, -2, -63, 0, 0,
    ]);
  });

  it('absolute: the position over full travel (7-bit or 14-bit); a button is pressed from 64', () => {
    expect(readControl('absolute', 0)).toEqual({ absolute: 0 });
    expect(readControl('absolute', 127)).toEqual({ absolute: 1 });
    expect(readControl('absolute', 8192, 16383)).toEqual({ absolute: 8192 / 16383 });
    expect(readControl('button', 63)).toEqual({ pressed: false });
    expect(readControl('button', 64)).toEqual({ pressed: true });
  });
});
