import { z } from 'zod';
import { parseJsonText } from '../../../src-shared/json-text';
import { parseWithSchema } from '../../../src-shared/zod-issues';
import { ENCODINGS, type Encoding } from './encoder';

/**
 * Hardware bindings: which control of which device drives which of the desk's knobs. A MIDI
 * control is named by its input port's name (stable across restarts, where port ids are not), its
 * channel, message kind and number; a gamepad control by the pad's id and the axis or button
 * index. Saved in the app's settings (local storage) and exported as a file holding the bindings
 * and nothing else; both are read back through this schema, so a hand-edited or foreign file is
 * refused with the field named instead of binding garbage.
 */
export const HARDWARE_TARGETS = [
  'zeta',
  'wnRadPerSec',
  'tauSeconds',
  'variant',
  'playPause',
  'fine',
  'coarse',
] as const;
export type HardwareTarget = (typeof HARDWARE_TARGETS)[number];

export const HARDWARE_TARGET_LABELS: Readonly<Record<HardwareTarget, string>> = Object.freeze({
  zeta: 'ζ stability',
  wnRadPerSec: 'ωn sensitivity',
  tauSeconds: 'τ horizon (reset mode)',
  variant: 'variant',
  playPause: 'play / pause',
  fine: 'fine steps (held)',
  coarse: 'coarse steps (held)',
});

/** What a target is: a knob with a scale, a choice among the variants, or a button's action. */
export type TargetKind = 'continuous' | 'choice' | 'action';
export const TARGET_KINDS: Readonly<Record<HardwareTarget, TargetKind>> = Object.freeze({
  zeta: 'continuous',
  wnRadPerSec: 'continuous',
  tauSeconds: 'continuous',
  variant: 'choice',
  playPause: 'action',
  fine: 'action',
  coarse: 'action',
});

const NameSchema = z.string().min(1).max(200);

export const MidiSourceSchema = z
  .strictObject({
    device: z.literal('midi'),
    input: NameSchema,
    kind: z.enum(['cc', 'note', 'pitch']),
    channel: z.int().min(1).max(16),
    number: z.int().min(0).max(127),
  })
  // a channel has one pitch bend, read as number 0 (midi-message.ts)
  .refine((source) => source.kind !== 'pitch' || source.number === 0, {
    message: 'a pitch bend has number 0',
    path: ['number'],
  });
export const GamepadSourceSchema = z.strictObject({
  device: z.literal('gamepad'),
  gamepad: NameSchema,
  control: z.enum(['axis', 'button']),
  index: z.int().min(0).max(63),
});
export const ControlSourceSchema = z.discriminatedUnion('device', [MidiSourceSchema, GamepadSourceSchema]);
export type ControlSource = z.infer<typeof ControlSourceSchema>;

export const BindingSchema = z
  .strictObject({
    target: z.enum(HARDWARE_TARGETS),
    source: ControlSourceSchema,
    encoding: z.enum(ENCODINGS),
  })
  .refine((b) => encodingsFor(b.source, b.target).includes(b.encoding), {
    message: 'the encoding is not one this control and target can use',
    path: ['encoding'],
  });
export type Binding = z.infer<typeof BindingSchema>;

export const BINDINGS_FILE_KIND = 'knob-studio.hardware-bindings';
export const BindingsFileSchema = z.strictObject({
  kind: z.literal(BINDINGS_FILE_KIND),
  version: z.literal(1),
  bindings: z
    .array(BindingSchema)
    .max(HARDWARE_TARGETS.length)
    .refine((all) => new Set(all.map((b) => b.target)).size === all.length, {
      message: 'a target is bound twice',
    })
    .refine((all) => new Set(all.map((b) => JSON.stringify(b.source))).size === all.length, {
      message: 'a control is bound to two targets',
    }),
});
export type BindingsFile = z.infer<typeof BindingsFileSchema>;

/**
 * The encodings a control can be read with for a target, the first being the one learning picks:
 * a knob takes a position or a relative encoder's steps (a stick also as a jog), never a note; the
 * variant also takes a button (the next variant); play/pause takes a press (a relative encoder's
 * detent is one); the fine and coarse modifiers are held, so only a button holds them. A stick and
 * a pitch bend rest at the middle of their travel, so they press nothing. A note is a button, a
 * pitch bend and a gamepad trigger are positions. No encoding: the control cannot drive the target.
 */
const RELATIVE: readonly Encoding[] = ['relative-twos-complement', 'relative-offset-binary', 'relative-signed-bit'];

export function encodingsFor(source: ControlSource, target: HardwareTarget): readonly Encoding[] {
  const kind = TARGET_KINDS[target];
  const centred =
    (source.device === 'gamepad' && source.control === 'axis') || (source.device === 'midi' && source.kind === 'pitch');
  if (kind === 'action' && centred) return [];
  if (source.device === 'gamepad') {
    if (source.control === 'button') return kind === 'continuous' ? ['absolute'] : ['button'];
    return kind === 'continuous' ? ['jog', 'absolute'] : ['absolute'];
  }
  if (source.kind === 'note') return kind === 'continuous' ? [] : ['button'];
  if (source.kind === 'pitch') return ['absolute'];
  if (kind === 'continuous') return ['absolute', ...RELATIVE];
  if (kind === 'choice') return ['absolute', ...RELATIVE, 'button'];
  return target === 'playPause' ? ['button', ...RELATIVE] : ['button'];
}

/** The encoding a freshly learnt control starts with (the operator may pick another). */
export function defaultEncoding(source: ControlSource, target: HardwareTarget): Encoding | null {
  return encodingsFor(source, target)[0] ?? null;
}

export function sameSource(a: ControlSource, b: ControlSource): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A control without its device: "CC 21, channel 1", "note 36, channel 10", "axis 1". */
export function controlName(source: ControlSource): string {
  if (source.device === 'gamepad') return `${source.control} ${source.index}`;
  const what =
    source.kind === 'cc' ? `CC ${source.number}` : source.kind === 'note' ? `note ${source.number}` : 'pitch bend';
  return `${what}, channel ${source.channel}`;
}

/** A control in words: "CC 21, channel 1, on 'Arturia BeatStep'". */
export function describeSource(source: ControlSource): string {
  return source.device === 'gamepad'
    ? `${controlName(source)} of gamepad '${source.gamepad}'`
    : `${controlName(source)}, on '${source.input}'`;
}

/** The bindings of a bindings file's text; a typed error naming the file and each offending field. */
export function readBindingsFile(text: string, fileName: string): Binding[] {
  return parseWithSchema(BindingsFileSchema, parseJsonText(text, fileName), {
    code: 'INVALID_INPUT',
    what: `${fileName} is not a bindings file`,
  }).bindings;
}
