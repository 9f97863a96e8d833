import { z } from 'zod';
import { CorruptionScheduleSchema } from '../corruptions/schedule';
import { GateSettingsSchema } from '../gate/gate-settings';
import { RECORDING_ORIGINS, SourceKindSchema } from './session-state';

/**
 * Recent runs: every recording the session makes is kept in the app's data folder (as a trace
 * file) until the folder outgrows its size limit, oldest first. An entry says what the run was
 * (source, model, settings, when) and where the source was when it was kept, so a reopened run (or
 * a reload of the app) continues where it left off.
 */
/** run-<UTC second>-<12 random hex digits>; folders from before keep their run-<second>-<counter> ids. */
export const RECENT_RUN_ID = /^run-\d{8}T\d{6}Z-(?:\d{1,9}|[0-9a-f]{12})$/;

/** What the folder keeps of a run (its index entry, and the entry in the trace file's context). */
export const KeptRunSchema = z.strictObject({
  /** The run's file stem in the folder (run-YYYYMMDDTHHMMSSZ-XXXXXXXXXXXX). */
  id: z.string().regex(RECENT_RUN_ID),
  keptAt: z.string(),
  description: z.string().max(4096),
  origin: z.enum(RECORDING_ORIGINS),
  /** The model file(s), joined with ' + '; null when unknown. */
  model: z.string().max(8192).nullable(),
  /** The source it was recorded from, to reopen it; null when none was open. */
  source: z
    .strictObject({
      kind: SourceKindSchema,
      path: z.string().max(4096).nullable(),
      frameRateHz: z.number().positive(),
      description: z.string().max(4096),
    })
    .nullable(),
  /** The corruption schedule and seed in force at its last frame. */
  schedule: CorruptionScheduleSchema.nullable(),
  seed: z.number().int().nonnegative(),
  settings: GateSettingsSchema,
  frameCount: z.number().int().nonnegative(),
  labelledFrameCount: z.number().int().nonnegative(),
  /** The source frame play resumes from; null for a camera. */
  position: z.number().int().nonnegative().nullable(),
  bytes: z.number().int().nonnegative(),
});
export type KeptRun = z.infer<typeof KeptRunSchema>;

/** A tag: 1 to 32 letters, digits, spaces, '-', '_', '.', ':' or '/', not starting or ending with a space. */
export const RUN_TAG = /^[\p{L}\p{N}_.:/-](?:[\p{L}\p{N} _.:/-]{0,30}[\p{L}\p{N}_.:/-])?$/u;
export const MAX_RUN_TAGS = 16;

/**
 * What the operator says of a run: a name, tags and notes (issue 32). Kept beside the index
 * (annotations.json), never in the run's trace file, so annotating a run of hours writes a few
 * bytes; keeping the run again keeps them.
 */
export const RunAnnotationSchema = z.strictObject({
  name: z.string().max(120),
  tags: z
    .array(z.string().regex(RUN_TAG, 'a tag is 1 to 32 letters, digits, spaces or - _ . : /'))
    .max(MAX_RUN_TAGS)
    .refine((tags) => new Set(tags).size === tags.length, 'a tag is given twice'),
  notes: z.string().max(4000),
});
export type RunAnnotation = z.infer<typeof RunAnnotationSchema>;
export const NO_ANNOTATION: RunAnnotation = { name: '', tags: [], notes: '' };

/** A kept run as the API lists it: what the folder keeps, and the operator's annotation. */
export const RecentRunSchema = KeptRunSchema.extend(RunAnnotationSchema.shape);
export type RecentRun = z.infer<typeof RecentRunSchema>;

/** How many runs one comparison takes: a reference and up to seven against it. */
export const MAX_COMPARED_RUNS = 8;

export const RunsCompareParamsSchema = z.strictObject({
  /** The runs in order; the first is the reference every other is compared with. */
  ids: z
    .array(z.string().regex(RECENT_RUN_ID))
    .min(2)
    .max(MAX_COMPARED_RUNS)
    .refine((ids) => new Set(ids).size === ids.length, 'a run is given twice'),
});

export const RunsAnnotateParamsSchema = z
  .strictObject({ id: z.string().regex(RECENT_RUN_ID) })
  .extend(RunAnnotationSchema.shape);

export const RecentRunsSchema = z.strictObject({
  /** False when this backend keeps no runs (no data folder was given to it). */
  enabled: z.boolean(),
  folder: z.string().nullable(),
  limitBytes: z.number().int().nonnegative(),
  usedBytes: z.number().int().nonnegative(),
  /** Newest first. */
  runs: z.array(RecentRunSchema),
});
export type RecentRuns = z.infer<typeof RecentRunsSchema>;

/** The folder's size limit: at least 0 (keep nothing), at most 1 TiB. */
export const RecentRunsLimitSchema = z
  .number()
  .int()
  .nonnegative()
  .max(2 ** 40);
