import { z } from 'zod';
import { METRIC_GROUPINGS } from './metrics-schemas';

/**
 * Split-conformal prediction sets of a recording's output in the desk (issue 32): the API's
 * request and answer (contract.ts 'conformal.sets'). The threshold is calibrated on the first
 * labelled frames of the window and the sets are judged on the rest, in time order (the honest
 * split for a stream, as the calibrators' default is).
 */
export const CONFORMAL_SCORES = ['lac', 'aps'] as const;

export const ConformalParamsSchema = z.strictObject({
  /** Miscoverage: the sets aim at coverage 1 - alpha. */
  alpha: z.number().gt(0).lt(1).default(0.1),
  /** LAC (1 - p_y, smallest sets) or APS (probability summed down to y, adaptive sets), not randomised. */
  score: z.enum(CONFORMAL_SCORES).default('lac'),
  /** Only the last N recorded frames (absent: all). */
  lastFrames: z.number().int().positive().optional(),
  groupBy: z.enum(METRIC_GROUPINGS).default('none'),
  /** Share of the window's labelled frames, from its start, the threshold is calibrated on. */
  calibrationShare: z.number().min(0.1).max(0.9).default(0.5),
});

/** Coverage (with its Wilson 95 % interval) and set sizes over some evaluated frames. */
const CoverageSchema = z.strictObject({
  frames: z.number().int().positive(),
  coverage: z.number().min(0).max(1),
  lo: z.number().min(0).max(1),
  hi: z.number().min(0).max(1),
  meanSetSize: z.number().nonnegative(),
  /** Share of frames whose set is empty (the model abstains), and whose set holds one class. */
  emptyShare: z.number().min(0).max(1),
  singletonShare: z.number().min(0).max(1),
});

export const ConformalSetsSchema = z.strictObject({
  recordingId: z.number().int().positive(),
  settingsVersion: z.number().int().nonnegative(),
  /** The output calibrator applied after fusion, in words; null for none. */
  calibrator: z.string().nullable(),
  window: z.string(),
  /** The method in full: "split conformal (LAC, alpha 0.1, calibrated on ...)". */
  identity: z.string(),
  score: z.enum(CONFORMAL_SCORES),
  alpha: z.number(),
  /** The calibrated threshold on the score; null for +infinity (too few frames: every class in every set). */
  qHat: z.number().nullable(),
  calibrationFrames: z.number().int().positive(),
  evaluatedFrames: z.number().int().positive(),
  /** What the coverage guarantee assumes, in words, shown where the figures are. */
  assumption: z.string(),
  overall: CoverageSchema,
  /** Frames by set size: sizes 0 to 9 each, then "10 or more". */
  sizes: z.array(z.strictObject({ size: z.string(), frames: z.number().int().nonnegative() })),
  groupBy: z.enum(METRIC_GROUPINGS),
  /** The evaluated frames' coverage and set sizes per group. */
  groups: z.array(CoverageSchema.extend({ key: z.string() })),
  computeMs: z.number(),
});
