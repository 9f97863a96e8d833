/**
 * How a hardware control's value reads. An absolute control (a potentiometer, a fader, an encoder
 * set to "absolute", a gamepad trigger) sends its position; a relative encoder sends how far it
 * turned since its last message, in one of the conventions control surfaces use:
 * - two's complement: 1-63 clockwise by that many steps, 127 down to 65 anticlockwise by 1 to 63
 *   (value - 128), a 7-bit two's-complement number;
 * - offset binary: 64 is no movement, 65 one step clockwise, 63 one step anticlockwise (value - 64);
 * - signed bit: bit 6 is the sign and bits 0-5 the steps (65 is one step anticlockwise), the
 *   sign-magnitude form of Mackie-style surfaces;
 * a button is pressed at 64 or more (a note at any velocity above 0); a gamepad stick is a jog: its
 * deflection is a rate (gamepad.ts). Pure: the bound control (bound-control.ts) makes knob values.
 */
export const ENCODINGS = [
  'absolute',
  'relative-twos-complement',
  'relative-offset-binary',
  'relative-signed-bit',
  'button',
  'jog',
] as const;
export type Encoding = (typeof ENCODINGS)[number];

export const ENCODING_LABELS: Readonly<Record<Encoding, string>> = Object.freeze({
  absolute: 'absolute',
  'relative-twos-complement': "relative (two's complement)",
  'relative-offset-binary': 'relative (offset binary, 64 = 0)',
  'relative-signed-bit': 'relative (signed bit)',
  button: 'button (pressed at 64 or more)',
  jog: 'jog (deflection sets the speed)',
});

/** A control's reading: its position in [0, 1], the steps it turned (positive: clockwise), or a button's state. */
export type ControlReading = { absolute: number } | { steps: number } | { pressed: boolean };

/**
 * Reads a MIDI controller's 7-bit value (0-127) under an encoding; `max` is the value of full
 * travel (127, or 16383 for a 14-bit pitch bend, which is always absolute). A jog is a gamepad's,
 * never a MIDI value's: read as absolute.
 */
export function readControl(encoding: Encoding, value: number, max = 127): ControlReading {
  switch (encoding) {
    case 'relative-twos-complement':
      return { steps: value >= 64 ? value - 128 : value };
    case 'relative-offset-binary':
      return { steps: value - 64 };
    case 'relative-signed-bit':
      return { steps: value & 0x40 ? 0 - (value & 0x3f) : value & 0x3f }; // 0 - 0 is +0: 64 reads as no movement
    case 'button':
      return { pressed: value >= 64 };
    case 'absolute':
    case 'jog':
      return { absolute: Math.min(1, Math.max(0, value / max)) };
  }
}
