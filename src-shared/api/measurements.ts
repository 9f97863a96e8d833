import { z } from 'zod';
import { CORRUPTION_NAMES } from '../corruptions/corruption-table';
import { GateSettingsSchema } from '../gate/gate-settings';
import { TUNING_METRICS } from '../tuning/tuning-objective';
import { TuningConstraintsSchema } from '../tuning/tuning-search';

/**
 * The desk's measurements of the gate (issue 17) as the API carries them: the step probe at the
 * current knobs (recorded once through the model, replayed at every knob change) and a tune of the
 * current recording. Numbers that are not finite travel as null.
 */
/**
 * What a desk probe records over: the embedded test set at 30 fps, or the session's open file
 * source (a dataset, image folder or video: its frames at its own frame rate, under the probe's own
 * corruption schedule, not the source's).
 */
export const PROBE_SOURCES = ['embedded', 'open-source'] as const;
export type ProbeSourceKind = (typeof PROBE_SOURCES)[number];

export const StepProbeParamsSchema = z.strictObject({
  over: z.enum(PROBE_SOURCES).default('embedded'),
  corruption: z.enum(CORRUPTION_NAMES).default('shot_noise'),
  realisations: z.number().int().min(2).max(256).default(32),
  framesPerLevel: z.number().int().min(20).max(3000).default(300),
  seed: z.number().int().nonnegative().max(0xffffffff).default(0),
});

const nullableNumber = z.number().nullable();

export const StepProbeViewSchema = z.strictObject({
  settingsVersion: z.number().int().nonnegative(),
  /** What was recorded: corruption, levels, realisations, frames per level, frame rate, source. */
  description: z.string(),
  /** Milliseconds the recording took through the model; null when this call reused it. */
  recordMs: nullableNumber,
  /** Milliseconds the replay at the current knobs took (no model). */
  replayMs: z.number(),
  tSeconds: z.array(z.number()),
  measured: z.array(nullableNumber),
  predicted: z.array(nullableNumber),
  bandLo: z.array(nullableNumber),
  bandHi: z.array(nullableNumber),
  meanG: z.array(nullableNumber),
  medianG: z.array(nullableNumber),
  q25G: z.array(nullableNumber),
  q75G: z.array(nullableNumber),
  meanUStar: z.array(nullableNumber),
  realisations: z.number().int(),
  bandLabel: z.string(),
  insideFraction: z.number(),
  insideFractionTransient: z.number(),
  uBefore: z.number(),
  uAfter: z.number(),
  /** Rise time, 2 % settling time and overshoot: measured, discrete and continuous predictions. */
  rows: z.array(
    z.strictObject({
      name: z.string(),
      unit: z.string(),
      measured: nullableNumber,
      discrete: nullableNumber,
      continuous: nullableNumber,
    }),
  ),
  /**
   * Why the measured rise and settling times are null, when they are: the mean response never
   * leaves its noise band after the step (step-probe-summary.ts noiseFloor); null otherwise.
   */
  measuredNote: z.string().nullable(),
  identified: z.strictObject({ zeta: z.number(), wnRadPerSec: z.number() }).nullable(),
  identificationNote: z.string().nullable(),
  clippedFrames: z.number().int().nonnegative(),
});
export type StepProbeView = z.infer<typeof StepProbeViewSchema>;

export const FrequencyProbeParamsSchema = z.strictObject({
  over: z.enum(PROBE_SOURCES).default('embedded'),
  corruption: z.enum(CORRUPTION_NAMES).default('shot_noise'),
  frequencies: z.number().int().min(2).max(16).default(8),
  seed: z.number().int().nonnegative().max(0xffffffff).default(0),
});

export const FrequencyProbeViewSchema = z.strictObject({
  settingsVersion: z.number().int().nonnegative(),
  description: z.string(),
  recordMs: nullableNumber,
  replayMs: z.number(),
  /** The discretisation of the theory curve (the knobs'). */
  discretization: z.string(),
  theoryHz: z.array(z.number()),
  theoryDb: z.array(nullableNumber),
  points: z.array(
    z.strictObject({
      frequencyHz: z.number(),
      magnitudeDb: nullableNumber,
      magnitudeDbStandardError: nullableNumber,
      theoryDb: nullableNumber,
      /** |measured - theory| in the measurement's standard errors. */
      errorInStandardErrors: nullableNumber,
      phaseDeg: nullableNumber,
      phaseDegStandardError: nullableNumber,
      theoryPhaseDeg: nullableNumber,
      /** Total harmonic distortion of g at this frequency (a share). */
      harmonicDistortion: nullableNumber,
      /** g left [0, 1] in the analysed window: the response is not linear there. */
      clipped: z.boolean(),
    }),
  ),
  lowPass: z.boolean(),
});
export type FrequencyProbeView = z.infer<typeof FrequencyProbeViewSchema>;

export const TuneParamsSchema = z.strictObject({
  metric: z.enum(TUNING_METRICS).default('ece'),
  constraints: TuningConstraintsSchema.default({}),
  split: z.enum(['time', 'random', 'none']).default('time'),
});

export const TuneCandidateSchema = z.strictObject({
  point: z.strictObject({ settings: GateSettingsSchema, temperature: z.number().positive() }),
  /**
   * The metric on the search frames (what the search minimised); a screened search's grid and
   * Pareto entries on the stride of them (TuningSummary.screenedFrameCount), its current and best
   * on every one.
   */
  metric: nullableNumber,
  settlingTimeSeconds: nullableNumber,
  overshootPercent: nullableNumber,
  bandwidthHz: nullableNumber,
  feasible: z.boolean(),
  violations: z.array(z.string()),
});
export type TuneCandidate = z.infer<typeof TuneCandidateSchema>;

/** A tune as `knob tune --json` writes it; the API's view adds the recording and settings version. */
export const TuningSummarySchema = z.strictObject({
  metric: z.enum(TUNING_METRICS),
  identity: z.string(),
  split: z.string(),
  /** Frames the search minimised the metric on, and the held-out frames the result is reported on. */
  searchFrameCount: z.number().int().nonnegative(),
  heldOutFrameCount: z.number().int().nonnegative(),
  /**
   * The grid and the refinement scored an even stride of this many search frames, a long
   * recording's screening (the best settings then scored again on every one); null: every one.
   */
  screenedFrameCount: z.number().int().positive().nullable(),
  /** The search minimised on the frames the result is reported on: the interval is flattered by the choice. */
  searchedOnHeldOut: z.boolean(),
  /** The metric of the current and the chosen setting on the held-out frames. */
  heldOut: z.strictObject({ current: nullableNumber, best: nullableNumber }),
  constraints: TuningConstraintsSchema,
  foundFeasible: z.boolean(),
  current: TuneCandidateSchema,
  best: TuneCandidateSchema,
  grid: z.array(TuneCandidateSchema),
  pareto: z.array(TuneCandidateSchema),
  /** best - current on the held-out frames: paired bootstrap interval and the verdict at 95 %. */
  improvement: z.strictObject({
    difference: nullableNumber,
    lo: nullableNumber,
    hi: nullableNumber,
    method: z.string(),
    verdict: z.enum(['better', 'worse', 'indistinguishable']),
  }),
  evaluations: z.number().int().positive(),
  threads: z.number().int().positive(),
  wallMs: z.number(),
});
export type TuningSummary = z.infer<typeof TuningSummarySchema>;

export const TuneViewSchema = TuningSummarySchema.extend({
  recordingId: z.number().int().positive(),
  settingsVersion: z.number().int().nonnegative(),
});
export type TuneView = z.infer<typeof TuneViewSchema>;

/** The paper's analyses of the current recording at the current knobs (`analysis.run`). */
export const AnalysesParamsSchema = z.strictObject({
  /** Permutations of the gate-conditional test. */
  permutations: z.number().int().min(19).max(100_000).default(999),
});

const AnalysisTableSchema = z.strictObject({ columns: z.array(z.string()), rows: z.array(z.array(z.string())) });

export const AnalysesViewSchema = z.strictObject({
  recordingId: z.number().int().positive(),
  settingsVersion: z.number().int().nonnegative(),
  frames: z.number().int().positive(),
  labelledFrames: z.number().int().nonnegative(),
  /** The summary in the words `knob analyze` prints (analysis-text.ts). */
  lines: z.array(z.string()),
  /** T_eff and CSR by severity; null when the recording has no severity column. */
  bySeverity: AnalysisTableSchema.nullable(),
  /** The first frames with T_eff < 1 and their reasons (of `exceptionCount`). */
  exceptions: AnalysisTableSchema,
  exceptionCount: z.number().int().nonnegative(),
  /** Milliseconds the analyses took (a replay and the statistics; no model). */
  wallMs: z.number(),
});
export type AnalysesView = z.infer<typeof AnalysesViewSchema>;
