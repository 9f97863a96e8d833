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

export const RecentRunSchema = z.strictObject({
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
export type RecentRun = z.infer<typeof RecentRunSchema>;

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
