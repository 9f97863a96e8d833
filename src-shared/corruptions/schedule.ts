import { z } from 'zod';
import { KnobError } from '../errors';
import { parseWithSchema } from '../zod-issues';
import { seededRandom } from '../random';
import { CORRUPTION_NAMES, corruptionUnavailable, type CorruptionName } from './corruption-table';
import { FrameRateHzSchema } from '../gate/accepted-ranges';

/**
 * Corruption schedules over a stream: which corruption and severity each frame gets. Severity 0 is
 * the clean frame. Every frame records its corruption, integer severity, the continuous severity it
 * was rounded from, and its seed (ARCHITECTURE.md "Data the app ships").
 */
const name = z.enum(CORRUPTION_NAMES);
const severity = z.number().min(0).max(5);

export const CorruptionScheduleSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('none') }),
  z.strictObject({ kind: z.literal('constant'), corruption: name, severity }),
  /** Severity levels that start at given frames, e.g. 1 at 0, 5 at 300, 1 at 600. */
  z.strictObject({
    kind: z.literal('step'),
    corruption: name,
    levels: z.array(z.strictObject({ atFrame: z.number().int().nonnegative(), severity })).min(1),
  }),
  z.strictObject({
    kind: z.literal('ramp'),
    corruption: name,
    fromSeverity: severity,
    toSeverity: severity,
    startFrame: z.number().int().nonnegative(),
    endFrame: z.number().int().positive(),
  }),
  /** s(n) = mean + amplitude sin(2 pi f n / frameRate + phase), rounded to an integer severity. */
  z
    .strictObject({
      kind: z.literal('sine'),
      corruption: name,
      mean: severity,
      amplitude: z.number().min(0).max(5),
      frequencyHz: z.number().positive(),
      frameRateHz: FrameRateHzSchema,
      phaseRad: z.number().min(-1000).max(1000).default(0),
    })
    // Frames sample the modulation: above half the frame rate it would alias into another frequency.
    .refine((s) => s.frequencyHz <= s.frameRateHz / 2, {
      message: 'must be at most half the frame rate (faster modulation cannot be shown frame by frame)',
      path: ['frequencyHz'],
    }),
  /** Piecewise constant: every `holdFrames` frames a new corruption and severity drawn from the seed. */
  z
    .strictObject({
      kind: z.literal('random'),
      corruptions: z.array(name).min(1),
      holdFrames: z.number().int().positive(),
      maxSeverity: z.number().int().min(1).max(5).default(5),
      /** The lowest severity drawn (0 lets clean segments in; equal to maxSeverity, one severity throughout). */
      minSeverity: z.number().int().min(0).max(5).default(0),
    })
    .refine((s) => s.minSeverity <= s.maxSeverity, {
      message: 'must be at most maxSeverity',
      path: ['minSeverity'],
    }),
]);

export type CorruptionScheduleInput = z.input<typeof CorruptionScheduleSchema>;
export type CorruptionSchedule = z.output<typeof CorruptionScheduleSchema>;

/** Validates a schedule once (typed error on bad input); corruptionAt then runs per frame. */
export function parseCorruptionSchedule(raw: unknown): CorruptionSchedule {
  return parseWithSchema(CorruptionScheduleSchema, raw, {
    code: 'INVALID_SETTINGS',
    what: 'Invalid corruption schedule',
    root: '(schedule)',
  });
}

/** A schedule in words, for reports and the desk ("step: fog at severity 4 from frame 200, ..."). */
export function describeSchedule(schedule: CorruptionSchedule): string {
  const name = (corruption: string): string => corruption.replaceAll('_', ' ');
  switch (schedule.kind) {
    case 'none':
      return 'none (clean frames)';
    case 'constant':
      return `${name(schedule.corruption)} at severity ${schedule.severity} throughout`;
    case 'step':
      return `${name(schedule.corruption)} in steps: ${schedule.levels.map((l) => `severity ${l.severity} from frame ${l.atFrame}`).join(', ')}`;
    case 'ramp':
      return `${name(schedule.corruption)} ramping from severity ${schedule.fromSeverity} at frame ${schedule.startFrame} to ${schedule.toSeverity} at frame ${schedule.endFrame}`;
    case 'sine':
      return `${name(schedule.corruption)} at severity ${schedule.mean} +- ${schedule.amplitude}, sinusoidal at ${schedule.frequencyHz} Hz (frames at ${schedule.frameRateHz} Hz)`;
    case 'random':
      return `random among ${schedule.corruptions.map(name).join(', ')}, severity ${schedule.minSeverity === 0 ? 'up to' : `${schedule.minSeverity} to`} ${schedule.maxSeverity}, a new draw every ${schedule.holdFrames} frames`;
  }
}

/** The corruptions a schedule can apply. */
export function scheduleCorruptions(schedule: CorruptionSchedule): CorruptionName[] {
  switch (schedule.kind) {
    case 'none':
      return [];
    case 'random':
      return [...schedule.corruptions];
    default:
      return [schedule.corruption];
  }
}

/** Refuses a schedule that names a corruption these frames cannot take (colour on grayscale). */
export function checkScheduleForChannels(schedule: CorruptionSchedule, channels: 1 | 3): void {
  for (const name of scheduleCorruptions(schedule)) {
    const reason = corruptionUnavailable(name, channels);
    if (reason !== null) throw new KnobError('INVALID_SETTINGS', `Invalid corruption schedule: ${reason}`);
  }
}

export interface FrameCorruption {
  corruption: CorruptionName | null;
  severity: number;
  continuousSeverity: number;
  seed: number;
}

/** Seed of a frame's corruption: a fixed mix of the stream seed and the frame index. */
export function frameSeed(streamSeed: number, frameIndex: number): number {
  return (Math.imul(streamSeed >>> 0, 0x9e3779b1) + Math.imul(frameIndex >>> 0, 0x85ebca6b)) >>> 0;
}

function clampSeverity(value: number): number {
  return Math.min(5, Math.max(0, value));
}

export function corruptionAt(schedule: CorruptionSchedule, frameIndex: number, streamSeed: number): FrameCorruption {
  const seed = frameSeed(streamSeed, frameIndex);
  const frame = (corruption: CorruptionName | null, continuous: number): FrameCorruption => {
    const s = Math.round(clampSeverity(continuous));
    return {
      corruption: s === 0 ? null : corruption,
      severity: s === 0 ? 0 : s,
      continuousSeverity: clampSeverity(continuous),
      seed,
    };
  };
  switch (schedule.kind) {
    case 'none':
      return frame(null, 0);
    case 'constant':
      return frame(schedule.corruption, schedule.severity);
    case 'step': {
      let level = 0;
      for (const step of [...schedule.levels].sort((a, b) => a.atFrame - b.atFrame))
        if (step.atFrame <= frameIndex) level = step.severity;
      return frame(schedule.corruption, level);
    }
    case 'ramp': {
      const t = Math.min(
        1,
        Math.max(0, (frameIndex - schedule.startFrame) / Math.max(1, schedule.endFrame - schedule.startFrame)),
      );
      return frame(schedule.corruption, schedule.fromSeverity + t * (schedule.toSeverity - schedule.fromSeverity));
    }
    case 'sine':
      return frame(
        schedule.corruption,
        schedule.mean +
          schedule.amplitude *
            Math.sin((2 * Math.PI * schedule.frequencyHz * frameIndex) / schedule.frameRateHz + schedule.phaseRad),
      );
    case 'random': {
      const segment = Math.floor(frameIndex / schedule.holdFrames);
      const random = seededRandom(frameSeed(streamSeed ^ 0x5bd1e995, segment));
      const corruption = schedule.corruptions[Math.floor(random() * schedule.corruptions.length)];
      const drawn = Math.floor(random() * (schedule.maxSeverity - schedule.minSeverity + 1));
      return frame(corruption, schedule.minSeverity + drawn);
    }
  }
}
