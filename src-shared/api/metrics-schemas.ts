import { z } from 'zod';
import { GateSettingsSchema } from '../gate/gate-settings';
import { BinningChoiceSchema, DEFAULT_BINNING_CHOICE } from '../metrics/binning-choice';
import { HeldOutSplitSchema } from '../calibrators/calibrator-evaluation';
import { CALIBRATION_METHODS, CalibratorSpecSchema } from '../calibrators/output-calibrator';
import { DEFAULT_HYSTERESIS_FRAMES } from '../calibrators/conditional-calibration';
import { MAX_HYSTERESIS_FRAMES } from '../calibrators/condition-hysteresis';
import { MAX_COMPARED_RUNS, RecentRunSchema } from './recent-runs';

/**
 * The metrics' part of the API contract (contract.ts): the snapshot of calibration metrics with
 * their identities and intervals, reliability diagrams, headline figures, paired differences and
 * the calibrator comparison, each a zod schema the TypeScript types are inferred from.
 */
export const MetricEntrySchema = z.strictObject({
  name: z.string(),
  identity: z.string(),
  value: z.number().nullable(),
  /**
   * Present when the value is an approximation, saying of what and how close: a kept-class
   * trace's estimate with how far the full trace's value can lie ("32 of 1000 classes kept a
   * frame: the full trace's value is within 0.0142 of it"), or that no bound is stated and why.
   */
  approximation: z.string().optional(),
  /** With a stated bound: the value the approximation stands for lies within this of `value`. */
  bound: z.number().nonnegative().optional(),
  /**
   * Present (value null) when the metric needs more labelled frames than the window has, or reads
   * every class of every frame and the snapshot left the classes out (MetricsOptions.classes).
   */
  unavailable: z
    .discriminatedUnion('reason', [
      z.strictObject({
        reason: z.literal('not enough frames'),
        needed: z.number().int().positive(),
        got: z.number().int().nonnegative(),
      }),
      z.strictObject({ reason: z.literal('every class not computed'), classCount: z.number().int().positive() }),
      z.strictObject({
        reason: z.literal('classes not kept'),
        keep: z.number().int().positive(),
        classCount: z.number().int().positive(),
      }),
    ])
    .optional(),
});
/** An interval of the value with this identity, and how it was computed. */
export const IntervalSchema = z.strictObject({
  identity: z.string(),
  lo: z.number(),
  hi: z.number(),
  method: z.string(),
  /**
   * Set when the interval was widened to contain its value, saying why, or when it resamples a
   * kept-class trace's estimates (its metric's stated bound then adds to it).
   */
  note: z.string().optional(),
});

export const ReliabilityDiagramSchema = z.strictObject({
  identity: z.string(),
  bins: z.array(
    z.strictObject({
      lo: z.number(),
      hi: z.number(),
      count: z.number(),
      meanConfidence: z.number().nullable(),
      accuracy: z.number().nullable(),
      gap: z.number().nullable(),
      wilsonLo: z.number().nullable(),
      wilsonHi: z.number().nullable(),
    }),
  ),
});

/** B against A on the same frames: the difference, its paired bootstrap interval and the verdict. */
export const PairedDifferenceSchema = z.strictObject({
  name: z.string(),
  identity: z.string(),
  a: z.number().nullable(),
  b: z.number().nullable(),
  difference: z.number().nullable(),
  /** null where not finite (an infinite NLL on a resample). */
  lo: z.number().nullable(),
  hi: z.number().nullable(),
  method: z.string(),
  lowerIsBetter: z.boolean(),
  verdict: z.enum(['better', 'worse', 'indistinguishable']),
  /** Set when the interval was widened to contain the difference, saying why. */
  note: z.string().optional(),
});

/** A headline figure with its interval (value null when not finite; `method` says which interval). */
export const HeadlineFigureSchema = z.strictObject({
  name: z.string(),
  identity: z.string(),
  value: z.number().nullable(),
  lo: z.number().nullable(),
  hi: z.number().nullable(),
  method: z.string(),
  /**
   * Set when the interval was widened to contain its value, saying why, or when it resamples a
   * kept-class trace's estimates (its metric's stated bound then adds to it).
   */
  note: z.string().optional(),
});

export const CalibratorCompareParamsSchema = z.strictObject({
  methods: z.array(z.enum(CALIBRATION_METHODS)).min(1).max(CALIBRATION_METHODS.length),
  split: HeldOutSplitSchema,
  lastFrames: z.number().int().positive().optional(),
  /**
   * The metadata columns whose values name each frame's condition, for the condition-aware
   * calibrator (e.g. corruption, or corruption and severity); frames without them have none.
   */
  conditionBy: z.array(z.string().min(1).max(200)).min(1).max(4).default(['corruption']),
  /** The condition-aware calibrator's hysteresis over a stream, in frames (condition-hysteresis.ts). */
  conditionHysteresisFrames: z.number().int().min(1).max(MAX_HYSTERESIS_FRAMES).default(DEFAULT_HYSTERESIS_FRAMES),
});

export const CalibratorComparisonSchema = z.strictObject({
  recordingId: z.number().int().positive(),
  settingsVersion: z.number().int().nonnegative(),
  split: z.string(),
  fitFrames: z.number().int().nonnegative(),
  evaluatedFrames: z.number().int().nonnegative(),
  /** The uncalibrated output on the evaluated frames. */
  before: z.array(HeadlineFigureSchema),
  beforeReliability: ReliabilityDiagramSchema,
  methods: z.array(
    z.strictObject({
      method: z.enum(CALIBRATION_METHODS),
      label: z.string(),
      spec: CalibratorSpecSchema,
      report: z.strictObject({
        method: z.string(),
        objectiveName: z.string(),
        objective: z.number().nullable(),
        iterations: z.number().int().nonnegative(),
        converged: z.boolean(),
      }),
      figures: z.array(HeadlineFigureSchema),
      /** The top-label reliability diagram on the evaluated frames (the same bins as beforeReliability). */
      reliability: ReliabilityDiagramSchema,
      /** Share of evaluated frames whose top-1 class the calibrator changes. */
      top1Changed: z.number().min(0).max(1),
    }),
  ),
  computeMs: z.number(),
});

export const METRIC_GROUPINGS = ['none', 'severity', 'corruption', 'predicted-class', 'gate-bucket'] as const;

export type MetricGrouping = (typeof METRIC_GROUPINGS)[number];

/** Which frames a snapshot covers and how much it computes: the one definition of these options. */
export const MetricsOptionsSchema = z.strictObject({
  /** Only the last N recorded frames (absent: all). */
  lastFrames: z.number().int().positive().optional(),
  groupBy: z.enum(METRIC_GROUPINGS).default('none'),
  /** 'light' leaves out the resampling (bootstrap intervals, smooth-curve band): for refreshes during playback. */
  detail: z.enum(['full', 'light']).default('full'),
  /**
   * 'auto': with many classes (more than 100) a snapshot computes what a knob turn needs in
   * O(frames) (top-label figures, NLL, Brier; fused-score-table.ts) and leaves out what reads every
   * class of every frame (classwise metrics, per-class reliability), marking each; 'all' computes
   * every class (the desk's Recompute).
   */
  classes: z.enum(['auto', 'all']).default('auto'),
  /** The chosen calibration error's bins and norm (binning-choice.ts). */
  binning: BinningChoiceSchema.default(DEFAULT_BINNING_CHOICE),
});
export type MetricsOptions = z.output<typeof MetricsOptionsSchema>;

/** A/B: the same recorded frames replayed at two settings, under the operator's binning. */
export const MetricsCompareParamsSchema = z.strictObject({
  a: GateSettingsSchema,
  b: GateSettingsSchema,
  lastFrames: z.number().int().positive().optional(),
  binning: BinningChoiceSchema.default(DEFAULT_BINNING_CHOICE),
});

export const MetricsSnapshotSchema = z.strictObject({
  /** The recording and the knob settings the snapshot was computed from (views compare them with the current ones). */
  recordingId: z.number().int().positive(),
  settingsVersion: z.number().int().nonnegative(),
  /** The output calibrator applied after fusion, in words ("temperature scaling, T = 1.42"); null for none. */
  calibrator: z.string().nullable(),
  frameCount: z.number().int().nonnegative(),
  /**
   * The operator's binning, the bins it made on these frames (equal-mass capped at the labelled
   * frames) and the chosen calibration error's name, identity and label; the reliability diagrams
   * use these bins.
   */
  binning: z.strictObject({
    choice: BinningChoiceSchema,
    identity: z.string(),
    name: z.string(),
    figureIdentity: z.string(),
    label: z.string(),
  }),
  labelledFrameCount: z.number().int().nonnegative(),
  /** Which frames: 'all recorded frames' or 'last N recorded frames'. */
  window: z.string(),
  /**
   * Present for a kept-class trace (`knob compact`, `knob run --keep`): every figure and chart is
   * of its estimates from the kept classes, each value says how far the full trace's can lie, and
   * `unsettledFrames` labelled frames have a top-1 the kept classes cannot settle.
   */
  kept: z.strictObject({ description: z.string(), unsettledFrames: z.number().int().nonnegative() }).optional(),
  values: z.array(MetricEntrySchema),
  /**
   * Intervals of the headline values, keyed by the identity of the value: bootstrap ones, and for
   * the debiased L2-CE also the asymptotic one (a value may have several; `method` says which).
   */
  intervals: z.array(IntervalSchema),
  /** Reliability diagram of the fused output (bins with count, confidence, accuracy, Wilson interval). */
  reliability: ReliabilityDiagramSchema.nullable(),
  /** One diagram per class: p_k against y = k over every labelled frame (classwise calibration). */
  classReliability: z.array(ReliabilityDiagramSchema.extend({ classIndex: z.number().int(), label: z.string() })),
  /** Smooth reliability curve (SmoothECE kernel) with its bootstrap band. */
  smooth: z
    .strictObject({
      identity: z.string(),
      t: z.array(z.number()),
      accuracy: z.array(z.number()),
      bandLo: z.array(z.number()),
      bandHi: z.array(z.number()),
      /** Samples supporting the curve at each t (kernel-weighted count): views fade it where this is small. */
      support: z.array(z.number()),
    })
    .nullable(),
  histogram: z
    .strictObject({ identity: z.string(), edges: z.array(z.number()), counts: z.array(z.number()) })
    .nullable(),
  /** Test-based calibration error with its bins, for its own reliability view (null in 'light' detail). */
  tce: z
    .strictObject({
      identity: z.string(),
      value: z.number(),
      bins: z.array(
        z.strictObject({
          count: z.number().int(),
          positives: z.number().int(),
          rejected: z.number().int(),
          scoreLo: z.number(),
          scoreHi: z.number(),
          meanScore: z.number(),
          scoreQuartiles: z.tuple([z.number(), z.number(), z.number()]),
        }),
      ),
    })
    .nullable(),
  groupBy: z.enum(METRIC_GROUPINGS),
  groups: z.array(
    z.strictObject({
      key: z.string(),
      count: z.number().int(),
      values: z.array(MetricEntrySchema),
      /** Bootstrap intervals of the group's values (none in 'light' detail). */
      intervals: z.array(IntervalSchema),
    }),
  ),
  /** How long the replay and metrics took, in milliseconds (no model call). */
  computeMs: z.number(),
});

/**
 * Two to eight recent runs side by side, each replayed at its recorded settings: the headline
 * figures with their intervals, its top-label reliability diagram (15 equal-width bins; null
 * without labelled frames) for the desk's overlay, and each run after the first minus the first
 * (the reference) with an interval from resampling each on its own, Bonferroni-adjusted over the
 * runs compared with the reference (compareRecentRuns).
 */
const RunSideSchema = z.strictObject({
  run: RecentRunSchema,
  figures: z.array(HeadlineFigureSchema),
  reliability: ReliabilityDiagramSchema.nullable(),
});
export const RunsComparisonSchema = z.strictObject({
  runs: z.array(RunSideSchema).min(2).max(MAX_COMPARED_RUNS),
  differences: z.array(z.strictObject({ run: z.string(), differences: z.array(PairedDifferenceSchema) })),
  computeMs: z.number(),
});
