import { z } from 'zod';
import { DEFAULT_FRAME_SIGNALS, DRIFT_DETECTORS, FRAME_SIGNAL_NAMES } from '../drift';
import { LABEL_FREE_METHOD_NAMES } from '../drift/label-free-accuracy';

/**
 * The unlabelled field in the desk (issue 30), as the API carries it: drift alarms on the current
 * recording at the knobs, its calibration over time, label-free accuracy estimates and the review
 * queue, each the same use case (and the same figures) as `knob monitor`, `knob timeline`,
 * `knob estimate` and `knob review`. Numbers that are not finite travel as null.
 */

/** Frames [start, end) of the current recording. */
const FrameRangeSchema = z
  .strictObject({ start: z.number().int().nonnegative(), end: z.number().int().positive() })
  .refine((range) => range.end > range.start, { message: 'end must be after start', path: ['end'] });

const basis = {
  recordingId: z.number().int().nonnegative(),
  settingsVersion: z.number().int().nonnegative(),
  /** Set on a kept-class trace: the figures are its kept-class estimates. */
  approximation: z.string().nullable(),
};

/** A drift alarm as the live stream's updates carry it. */
export const LiveAlarmSchema = z.strictObject({
  frame: z.number().int().nonnegative(),
  seconds: z.number(),
  signal: z.string(),
  detector: z.enum(DRIFT_DETECTORS),
});

/** How a recording's live watch stands, as each stream update says. */
export const LiveWatchStateSchema = z.strictObject({
  watching: z.boolean(),
  fromFrame: z.number().int().nonnegative(),
  alarmCount: z.number().int().nonnegative(),
  /** Why it stopped (the operator, the knobs moved, armed again); null while it watches. */
  stoppedBecause: z.string().nullable(),
});

/** Alarms a monitor view lists (and the stream chart marks); the count says how many there were in all. */
export const LISTED_ALARMS = 500;

export const MonitorParamsSchema = z.strictObject({
  /** The unshifted reference; null: the first fifth of the recording. */
  reference: FrameRangeSchema.nullable().default(null),
  /** Mean time between false alarms of the whole monitor on unshifted data, in hours of stream time. */
  falseAlarmHours: z.number().min(0.001).max(24).default(1),
  /** Each signal and detector once (a repeat would test a pair twice, at half the budget each). */
  signals: z
    .array(z.enum(FRAME_SIGNAL_NAMES))
    .min(1)
    .max(FRAME_SIGNAL_NAMES.length)
    .refine((names) => new Set(names).size === names.length, 'each signal at most once')
    .default([...DEFAULT_FRAME_SIGNALS]),
  detectors: z
    .array(z.enum(DRIFT_DETECTORS))
    .min(1)
    .max(DRIFT_DETECTORS.length)
    .refine((names) => new Set(names).size === names.length, 'each detector at most once')
    .default([...DRIFT_DETECTORS]),
  seed: z.number().int().nonnegative().max(0xffffffff).default(0),
});

export const MonitorViewSchema = z.strictObject({
  ...basis,
  referenceStart: z.number().int(),
  referenceEnd: z.number().int(),
  monitoredFrames: z.number().int(),
  framesPerSecond: z.number(),
  falseAlarmHours: z.number(),
  /**
   * The whole monitor's target shared by its tested signals (a union bound; a signal's detectors
   * calibrated as one alarm), in hours each.
   */
  falseAlarmHoursPerSignal: z.number(),
  signals: z.array(z.strictObject({ name: z.string(), description: z.string() })),
  pairs: z.array(
    z.strictObject({
      signal: z.string(),
      detector: z.enum(DRIFT_DETECTORS),
      identity: z.string(),
      /** Why the pair was not tested; null when it was. */
      skipped: z.string().nullable(),
      threshold: z.number().nullable(),
      /** How the threshold was calibrated, in words. */
      method: z.string().nullable(),
      alarms: z.number().int().nonnegative(),
    }),
  ),
  /** The first LISTED_ALARMS alarms in frame order. */
  alarms: z.array(
    z.strictObject({
      frame: z.number().int(),
      seconds: z.number(),
      signal: z.string(),
      detector: z.enum(DRIFT_DETECTORS),
      statistic: z.number().nullable(),
      threshold: z.number().nullable(),
    }),
  ),
  alarmCount: z.number().int().nonnegative(),
  wallMs: z.number(),
});

export const TimelineParamsSchema = z.strictObject({
  /** Frames a window (and between window starts); null: a minute of the recording's frames. */
  windowFrames: z.number().int().min(2).max(10_000_000).nullable().default(null),
  seed: z.number().int().nonnegative().max(0xffffffff).default(0),
});

const interval = z.strictObject({
  value: z.number().nullable(),
  low: z.number().nullable(),
  high: z.number().nullable(),
});

export const TimelineViewSchema = z.strictObject({
  ...basis,
  framesPerSecond: z.number(),
  windowFrames: z.number().int(),
  metrics: z.array(z.strictObject({ name: z.string(), identity: z.string() })),
  windows: z.array(
    z.strictObject({
      firstFrame: z.number().int(),
      endFrame: z.number().int(),
      seconds: z.number(),
      labelledFrames: z.number().int(),
      /** One per metric, in the order of `metrics`; null: too few labelled frames. */
      values: z.array(interval.nullable()),
    }),
  ),
  changePoints: z.array(
    z.strictObject({
      frame: z.number().int(),
      seconds: z.number(),
      accuracyBefore: z.number(),
      accuracyAfter: z.number(),
      pValue: z.number(),
    }),
  ),
  changePointMethod: z.string(),
});

export const EstimateParamsSchema = z.strictObject({
  /**
   * Labelled frames the estimators are fitted on: of `referenceTrace` when given (null: all of it),
   * else of the recording (null: the frames before the severity first changes, or the first fifth).
   */
  reference: FrameRangeSchema.nullable().default(null),
  /** A labelled trace of the same model to fit on (a dataset's run): every frame of the recording is then estimated. */
  referenceTrace: z.string().min(1).max(4096).nullable().default(null),
  by: z.enum(['window', 'severity']).default('window'),
  windowFrames: z.number().int().min(2).max(10_000_000).nullable().default(null),
  seed: z.number().int().nonnegative().max(0xffffffff).default(0),
});

export const EstimateViewSchema = z.strictObject({
  ...basis,
  /** The trace the estimators were fitted on; null: the recording itself. */
  referenceTrace: z.string().nullable(),
  referenceStart: z.number().int(),
  referenceEnd: z.number().int(),
  referenceLabelledFrames: z.number().int(),
  referenceAccuracy: z.number(),
  by: z.enum(['window', 'severity']),
  methods: z.array(
    z.strictObject({ method: z.enum(LABEL_FREE_METHOD_NAMES), identity: z.string(), assumption: z.string() }),
  ),
  groups: z.array(
    z.strictObject({
      key: z.string(),
      firstFrame: z.number().int(),
      frames: z.number().int(),
      /** One per method, in the order of `methods`. */
      estimates: z.array(interval),
      labelledFrames: z.number().int(),
      /** The group's true accuracy where its labels are there to reveal it (never used by an estimate). */
      trueAccuracy: z.number().nullable(),
    }),
  ),
  summary: z.array(
    z.strictObject({
      method: z.enum(LABEL_FREE_METHOD_NAMES),
      meanAbsoluteError: z.number().nullable(),
      covered: z.number().int(),
      groups: z.number().int(),
    }),
  ),
});

export const ReviewParamsSchema = z.strictObject({
  /** The window whose calibration error the labels should pin down; null: its last 2,000 frames. */
  window: FrameRangeSchema.nullable().default(null),
  count: z.number().int().min(1).max(200).default(10),
  seed: z.number().int().nonnegative().max(0xffffffff).default(0),
});

export const ReviewViewSchema = z.strictObject({
  ...basis,
  windowStart: z.number().int(),
  windowEnd: z.number().int(),
  labelledFrames: z.number().int(),
  identity: z.string(),
  ece: interval,
  queue: z.array(
    z.strictObject({
      frame: z.number().int(),
      seconds: z.number(),
      confidence: z.number(),
      reason: z.string(),
      /** How much this frame's label is expected to narrow the interval. */
      narrowing: z.number(),
    }),
  ),
});

export const WatchLiveParamsSchema = z.strictObject({ on: z.boolean() });

export const WatchLiveViewSchema = z.strictObject({
  recordingId: z.number().int().nonnegative(),
  /** Whether the recording's frames are being watched as they are recorded. */
  watching: z.boolean(),
  /** The first frame watched; null when no watch was ever armed on the recording. */
  fromFrame: z.number().int().nullable(),
  alarmCount: z.number().int().nonnegative(),
  /** Why the watch stopped (the operator, the knobs moved); null while it watches. */
  stoppedBecause: z.string().nullable(),
});

export type MonitorView = z.infer<typeof MonitorViewSchema>;
export type TimelineView = z.infer<typeof TimelineViewSchema>;
export type EstimateView = z.infer<typeof EstimateViewSchema>;
export type ReviewView = z.infer<typeof ReviewViewSchema>;

export const FIELD_METHODS = {
  /**
   * Drift alarms on the current recording at the knobs (`knob monitor`): thresholds calibrated on
   * the reference to the operator's mean time between false alarms, on the backend's threads
   * (cancelling the call stops them).
   */
  'field.monitor': { params: MonitorParamsSchema, result: MonitorViewSchema },
  /**
   * Arms the last `field.monitor` of the current live recording (its detectors and thresholds, at
   * the knobs it was calibrated at) on the frames recorded from now on, or stops it. Its alarms come
   * with the stream's updates and stay with the recording (a saved trace keeps them). Turning a knob
   * stops it: the thresholds were calibrated for the signals at the knobs of the monitor.
   */
  'field.watchLive': { params: WatchLiveParamsSchema, result: WatchLiveViewSchema },
  /** Calibration over time of the current recording's labelled frames, with change points (`knob timeline`). */
  'field.timeline': { params: TimelineParamsSchema, result: TimelineViewSchema },
  /** Label-free accuracy estimates after a labelled reference (`knob estimate`). */
  'field.estimate': { params: EstimateParamsSchema, result: EstimateViewSchema },
  /** The frames to label next to pin down a window's calibration error (`knob review`). */
  'field.review': { params: ReviewParamsSchema, result: ReviewViewSchema },
} as const;
