import { z } from 'zod';
import { CorruptionScheduleSchema } from '../corruptions/schedule';
import { ErrorPayloadSchema } from './envelope';
import { ClassMappingSchema } from '../labels/class-names';
import { ModelDescriptionSchema } from './model-options';
import { SourceIdentitySchema } from './source-identity';

/**
 * What the session is doing, as every view sees it (docs/ARCHITECTURE.md, "Session states"):
 *  - no-model     nothing loaded (a loaded trace can still be current: then the state is paused);
 *  - ready        a model is loaded (and maybe a source open), nothing recorded, nothing running;
 *  - playing      a file source plays in real time into the live recording;
 *  - camera       camera frames pushed by the renderer go into the live recording;
 *  - paused       a recording is current (live, from an offline run, or loaded) and nothing runs;
 *  - offline-run  the whole source goes through the model at full speed into a new recording.
 */
export const SESSION_STATES = ['no-model', 'ready', 'playing', 'camera', 'paused', 'offline-run'] as const;
export type SessionStateKind = (typeof SESSION_STATES)[number];

/** The one list of source kinds: what `source.open` takes and what a source reports. */
export const SOURCE_KINDS = ['embedded', 'dataset', 'folder', 'video', 'camera'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];
export const SourceKindSchema = z.enum(SOURCE_KINDS);

export const SourceInfoSchema = z.strictObject({
  kind: SourceKindSchema,
  /** The file or folder it reads; null for the embedded set and the camera. */
  path: z.string().nullable(),
  /** One line for humans: format, size, counts. */
  description: z.string(),
  /** Null when unknown before decoding (a video without a frame count, a camera). */
  frameCount: z.number().int().nonnegative().nullable(),
  /** Geometry of the frames as the source delivers them (a camera: the model's input). */
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  channels: z.union([z.literal(1), z.literal(3)]),
  frameRateHz: z.number().positive(),
  hasLabels: z.boolean(),
  labelNames: z.array(z.string()).nullable(),
  /** Where timestamps come from: the container's presentation times, a declared rate, or capture. */
  timestampSource: z.enum(['pts', 'declared-rate', 'capture']),
  /** The file, folder or camera it is, with its hash (null for a source opened before it was known). */
  identity: SourceIdentitySchema.nullable(),
  /** How the source's class names became the model's classes (null: no class names, or labels by index). */
  classMapping: ClassMappingSchema.nullable(),
});
export type SourceInfo = z.infer<typeof SourceInfoSchema>;

/** Where the current recording came from: only a live one grows when the stream plays on. */
export const RECORDING_ORIGINS = ['live', 'offline', 'loaded'] as const;
export type RecordingOrigin = (typeof RECORDING_ORIGINS)[number];

export const RecordingSummarySchema = z.strictObject({
  /** Changes whenever another recording becomes current: results carry it to say what they describe. */
  id: z.number().int().positive(),
  origin: z.enum(RECORDING_ORIGINS),
  description: z.string(),
  frameCount: z.number().int().nonnegative(),
  labelledFrameCount: z.number().int().nonnegative(),
  framesDropped: z.number().int().nonnegative(),
  /** Frames or labels not yet in a saved file: discarding it needs `discard: true`. */
  unsaved: z.boolean(),
  /** The file it was loaded from or last saved to. */
  path: z.string().nullable(),
  /**
   * Width of the model's features the recording carries (a trace recorded with them), null for
   * none: density- and proximity-aware calibrators need them.
   */
  featureWidth: z.number().int().positive().nullable(),
  /**
   * Present for a kept-class trace ("32 of 1000 classes kept a frame", `knob compact`): its views
   * are estimates with stated bounds, and what reads every class of every frame refuses it.
   */
  keptClasses: z.string().optional(),
  /**
   * The label layers (issue 27): frames labelled by the source and by an imported file (the truth),
   * the operator's corrections (a layer of their own), whether the metrics read the corrections,
   * and whether a correction can be undone or redone.
   */
  labels: z.strictObject({
    fromSource: z.number().int().nonnegative(),
    imported: z.number().int().nonnegative(),
    corrections: z.number().int().nonnegative(),
    useCorrections: z.boolean(),
    canUndo: z.boolean(),
    canRedo: z.boolean(),
  }),
});
export type RecordingSummary = z.infer<typeof RecordingSummarySchema>;

export const PlaybackSchema = z.strictObject({
  /** Next source frame to play (where a paused stream resumes). */
  position: z.number().int().nonnegative(),
  /** Times real time; applied at once while playing. */
  speed: z.number().positive().max(16),
  loop: z.boolean(),
});
export type Playback = z.infer<typeof PlaybackSchema>;

export const SessionStateSchema = z.strictObject({
  state: z.enum(SESSION_STATES),
  model: ModelDescriptionSchema.nullable(),
  source: SourceInfoSchema.nullable(),
  /** The open source's corruption schedule and stream seed. */
  schedule: CorruptionScheduleSchema.nullable(),
  seed: z.number().int().nonnegative(),
  playback: PlaybackSchema,
  recording: RecordingSummarySchema.nullable(),
  /** Why the stream stopped, or what went wrong in the background, when it did. */
  error: ErrorPayloadSchema.nullable(),
});
export type SessionState = z.infer<typeof SessionStateSchema>;
