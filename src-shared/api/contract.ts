import { z } from 'zod';
import { CalibratorSpecSchema } from '../calibrators/output-calibrator';
import { GateSettingsSchema } from '../gate/gate-settings';
import { CorruptionScheduleSchema } from '../corruptions/schedule';
import { ErrorPayloadSchema } from './envelope';
import { ConformalParamsSchema, ConformalSetsSchema } from './conformal-schemas';
import { MadeKnobModelSchema, MakeKnobModelParamsSchema } from './knob-model-schemas';
import {
  CalibratorCompareParamsSchema,
  CalibratorComparisonSchema,
  MetricsCompareParamsSchema,
  MetricsOptionsSchema,
  MetricsSnapshotSchema,
  PairedDifferenceSchema,
  RunsComparisonSchema,
} from './metrics-schemas';
import {
  AnalysesParamsSchema,
  AnalysesViewSchema,
  FrequencyProbeParamsSchema,
  FrequencyProbeViewSchema,
  StepProbeParamsSchema,
  StepProbeViewSchema,
  TuneParamsSchema,
  TuneViewSchema,
} from './measurements';
import { ModelDescriptionSchema, ModelOptionsSchema } from './model-options';
import {
  RECENT_RUN_ID,
  RecentRunsLimitSchema,
  RecentRunsSchema,
  RunsAnnotateParamsSchema,
  RunsCompareParamsSchema,
} from './recent-runs';
import { RecordingSummarySchema, SessionStateSchema, SourceInfoSchema, SourceKindSchema } from './session-state';
import { FrameRateHzSchema } from '../gate/accepted-ranges';
import { SourceIdentitySchema } from './source-identity';
import { ClassMappingSchema } from '../labels/class-names';
import { TuningBoundsSchema } from '../tuning/knob-ranges';
import { ConditionSwitchesSchema } from '../trace/condition-switches';
import { BundleExportedSchema, BundleExportParamsSchema } from './bundle-schemas';
import { FilePathSchema } from './file-path';
import { FIELD_METHODS, LiveAlarmSchema, LiveWatchStateSchema } from './field-watch';

/**
 * The typed API between the renderer and the backend (docs/ARCHITECTURE.md, "The API"). Each
 * method has a params schema and a result schema; each event a data schema. The backend parses
 * every request's params once, against these, before anything runs, and hands the handler the
 * parsed value; with contract checking on (tests), every result and event is checked against its
 * schema too. TypeScript types are inferred from the same schemas, so the contract cannot drift from
 * its checks.
 *
 * Methods that would replace a recording holding unsaved work take `discard`: without
 * `discard: true` they answer WOULD_DISCARD and change nothing.
 */

const discard = z.boolean().default(false);

/**
 * What to do with an output calibrator fitted on another model when a model loads: keep it applied
 * to the new model's output, or drop it. Without a choice such a load answers
 * CALIBRATOR_OF_ANOTHER_MODEL and changes nothing (issue 27: never applied silently).
 */
const calibratorChoice = z.enum(['keep', 'drop']).optional();

export const KnobsSchema = z.strictObject({
  gate: GateSettingsSchema,
  /** The output calibrator applied after fusion to every view; null for none. */
  calibrator: CalibratorSpecSchema.nullable(),
  /**
   * The SHA-256 of each file of the model the calibrator was fitted on or imported for (null with
   * no calibrator): a model switch compares it with the new model's.
   */
  calibratorModel: z.array(z.string().regex(/^[0-9a-f]{64}$/u)).nullable(),
  /** Incremented on every accepted change (gate or calibrator); every output records the version it used. */
  version: z.number().int().nonnegative(),
});
export type Knobs = z.infer<typeof KnobsSchema>;

export const ModelInfoSchema = ModelDescriptionSchema;

/** A frame's labels after a correction step: the truth, the operator's correction, what the metrics read. */
const LabelEditSchema = z.strictObject({
  frame: z.number().int(),
  truth: z.number().int(),
  correction: z.number().int(),
  /** The label the metrics read now (the correction over the truth when they use corrections). */
  label: z.number().int(),
  labelledFrames: z.number().int(),
  recording: RecordingSummarySchema,
});

/** A camera as the renderer knows it once it captures: the device's label and the capture resolution. */
const CameraDescriptionSchema = z.strictObject({
  deviceLabel: z.string().max(4096),
  width: z.number().int().positive().max(65_536),
  height: z.number().int().positive().max(65_536),
});

export const SourceOpenParamsSchema = z.strictObject({
  kind: SourceKindSchema,
  /** The file or folder, for every kind but 'embedded' and 'camera'; it must be of that kind. */
  path: FilePathSchema.optional(),
  frameRateHz: FrameRateHzSchema.optional(),
  /** Any source can carry a corruption schedule (applied to model-sized frames), with its seed. */
  schedule: CorruptionScheduleSchema.optional(),
  seed: z.number().int().nonnegative().max(0xffffffff).optional(),
  /**
   * Keep the model's features of every frame in the live recording (opt-in: 768 bytes a frame for
   * the shipped model), for density- and proximity-aware calibration; the model needs a features output.
   */
  recordFeatures: z.boolean().optional(),
  /**
   * A class map file (`source name -> model label`, text or JSON) for a labelled folder or manifest
   * whose class names are not the model's (issue 27: classes are matched by name, never by order).
   */
  classMap: FilePathSchema.optional(),
  /** The camera the renderer opened: its device label and capture resolution (provenance). */
  camera: CameraDescriptionSchema.optional(),
  discard,
});

/** Rolling figures of the fused output: exact accuracy and mean confidence over recent labelled frames. */
const RollingSchema = z.array(z.strictObject({ name: z.string(), identity: z.string(), value: z.number() }));

/** The live view's numbers for the latest frame, at most ~30 times a second (T_eff null when infinite). */
export const StreamUpdateSchema = z.strictObject({
  recordingId: z.number().int().positive(),
  /** The frame's index in the recording. */
  frame: z.number().int().nonnegative(),
  /** The frame's index in its source (the camera: its submission count). */
  sourceFrame: z.number().int().nonnegative(),
  timestampSeconds: z.number(),
  settingsVersion: z.number().int().nonnegative(),
  g: z.number(),
  uRef: z.number(),
  label: z.number().int().nullable(),
  top: z.array(
    z.strictObject({
      classIndex: z.number().int(),
      label: z.string(),
      fused: z.number(),
      static: z.number(),
      dynamic: z.number(),
    }),
  ),
  effectiveTemperature: z.number().nullable(),
  confidenceShrinkageRatio: z.number(),
  branchesDisagree: z.boolean(),
  framesProcessed: z.number().int().nonnegative(),
  framesDropped: z.number().int().nonnegative(),
  endToEndMs: z.number(),
  /** Exact accuracy and mean confidence over the recent labelled frames (sliding window). */
  rolling: RollingSchema,
  /** The frame as the model saw it (fitted to its input and corrupted), 8-bit, base64. */
  image: z.strictObject({
    width: z.number().int().positive(),
    height: z.number().int().positive(),
    channels: z.union([z.literal(1), z.literal(3)]),
    base64: z.string(),
  }),
  corruption: z.string().nullable(),
  severity: z.number(),
  /** The condition a condition-aware calibrator applies to the frame (detected from its features); else absent. */
  calibratorCondition: z.string().optional(),
  /** Drift alarms the live watch raised since the last update (field.watchLive); usually none. */
  driftAlarms: z.array(LiveAlarmSchema).optional(),
  driftWatch: LiveWatchStateSchema.nullable().optional(),
});

export const TraceSummarySchema = z.strictObject({
  path: z.string(),
  frameCount: z.number().int().nonnegative(),
  classCount: z.number().int().positive(),
});

export const RecordedFrameSchema = StreamUpdateSchema.pick({
  recordingId: true,
  frame: true,
  timestampSeconds: true,
  settingsVersion: true,
  g: true,
  uRef: true,
  label: true,
  top: true,
  effectiveTemperature: true,
  confidenceShrinkageRatio: true,
  branchesDisagree: true,
  corruption: true,
  severity: true,
  calibratorCondition: true,
}).extend({
  image: StreamUpdateSchema.shape.image.nullable(),
  /** Set for a frame of a kept-class trace: what of the readout is estimated from its kept classes, and how. */
  approximation: z.string().optional(),
});

export const AppInfoSchema = z.strictObject({
  name: z.string(),
  version: z.string(),
  /** The log file this backend writes (internal errors are logged there with their id); null when not logging to a file. */
  logFile: z.string().nullable(),
});

export {
  CalibratorComparisonSchema,
  HeadlineFigureSchema,
  METRIC_GROUPINGS,
  MetricsOptionsSchema,
  MetricsSnapshotSchema,
  PairedDifferenceSchema,
  type MetricGrouping,
  type MetricsOptions,
} from './metrics-schemas';

const empty = z.strictObject({});
const frameIndex = z.number().int().nonnegative();

export const API_METHODS = {
  'app.info': { params: empty, result: AppInfoSchema },
  /** The whole session as every view sees it (a reloaded page starts from this). */
  'session.get': { params: empty, result: SessionStateSchema },
  'knobs.get': { params: empty, result: KnobsSchema },
  /** Partial update; the reply is the whole new setting with its version. */
  'knobs.set': { params: z.strictObject({ gate: GateSettingsSchema.partial() }), result: KnobsSchema },
  /** Loads a model: the source closes and the current recording is replaced by none. */
  'model.load': {
    params: ModelOptionsSchema.extend({ discard, calibrator: calibratorChoice }),
    result: ModelInfoSchema,
  },
  'model.info': { params: empty, result: ModelInfoSchema.nullable() },
  /** The loaded classifier made a Knob model over a labelled dataset, written with its card (knob-model-schemas.ts). */
  'model.makeKnob': { params: MakeKnobModelParamsSchema, result: MadeKnobModelSchema },
  /** Opens a source of the given kind (a path of another kind is refused); the current recording is replaced by none. */
  'source.open': { params: SourceOpenParamsSchema, result: SourceInfoSchema },
  /**
   * Changes the open source's corruption schedule (and seed) in place: a running stream uses it from
   * the next frame, and each frame records the corruption it got.
   */
  /**
   * The camera source's device, known once the renderer captures (its label needs the camera
   * permission, its resolution the stream): the source and the live recording's provenance name it.
   */
  'source.describeCamera': { params: CameraDescriptionSchema, result: SourceInfoSchema },
  'source.configure': {
    params: z.strictObject({
      schedule: CorruptionScheduleSchema,
      seed: z.number().int().nonnegative().max(0xffffffff).optional(),
    }),
    result: SessionStateSchema,
  },
  /**
   * Plays (or resumes) the open source into the live recording. A current recording that is not
   * live (an offline run's, a loaded trace) is replaced by a new one.
   */
  'stream.start': {
    params: z.strictObject({ speed: z.number().positive().max(16).optional(), loop: z.boolean().optional(), discard }),
    result: SessionStateSchema,
  },
  /** Pauses; the recording stays current. */
  'stream.stop': { params: empty, result: SessionStateSchema },
  /** Speed (applied at once while playing) and looping. */
  'stream.playback': {
    params: z.strictObject({ speed: z.number().positive().max(16).optional(), loop: z.boolean().optional() }),
    result: SessionStateSchema,
  },
  /** Moves the source to a frame (where play resumes); the recording is kept and its clock runs on. */
  'stream.seek': { params: z.strictObject({ frame: frameIndex }), result: SessionStateSchema },
  /** The source back to its first frame (a seek to 0): the recording is kept. */
  'stream.rewind': { params: empty, result: SessionStateSchema },
  /** The operator's reset: the gate returns to rest at g0 before the next frame. */
  'stream.resetGate': { params: empty, result: SessionStateSchema },
  /**
   * The whole open file source through the model at full speed (batched) into a new recording;
   * progress on 'work.progress'; cancelling the call keeps the frames computed so far.
   */
  'stream.runOffline': {
    params: z.strictObject({ maxFrames: z.number().int().positive().optional(), discard }),
    result: z.strictObject({
      framesProcessed: z.number().int().nonnegative(),
      wallMs: z.number(),
      error: ErrorPayloadSchema.nullable(),
    }),
  },
  /** A new, empty live recording (the source position stays). */
  'recording.reset': { params: z.strictObject({ discard }), result: SessionStateSchema },
  /**
   * The operator's correction of a recorded frame (-1 takes it away): a layer over the truth, never
   * into it (issue 27), undoable; every view uses it at once when the metrics read corrections.
   */
  'stream.label': {
    params: z.strictObject({ frame: frameIndex, label: z.number().int().min(-1) }),
    result: LabelEditSchema,
  },
  /** Takes back the last correction (null: none to undo). */
  'labels.undo': { params: empty, result: LabelEditSchema.nullable() },
  'labels.redo': { params: empty, result: LabelEditSchema.nullable() },
  /** Whether the metrics read the corrections over the truth, or the truth alone (a visible choice). */
  'labels.useCorrections': { params: z.strictObject({ use: z.boolean() }), result: RecordingSummarySchema },
  /**
   * Per-frame labels from a CSV or JSON file (by frame index or timestamp, ranges allowed) as the
   * truth of the frames the source left unlabelled; a frame the source labelled is never replaced.
   */
  'labels.import': {
    params: z.strictObject({ path: FilePathSchema, classMap: FilePathSchema.optional() }),
    result: z.strictObject({
      framesLabelled: z.number().int().nonnegative(),
      rows: z.number().int().nonnegative(),
      key: z.enum(['frame', 'time']),
      file: SourceIdentitySchema,
      classMapping: ClassMappingSchema.nullable(),
      recording: RecordingSummarySchema,
    }),
  },
  /** A recorded frame replayed at the current knobs (scrubbing): the live view's numbers and, while kept, its image. */
  'trace.frame': { params: z.strictObject({ frame: frameIndex }), result: RecordedFrameSchema },
  'trace.save': { params: z.strictObject({ path: FilePathSchema }), result: TraceSummarySchema },
  /** Makes a saved trace the current recording (playing stops). */
  'trace.load': { params: z.strictObject({ path: FilePathSchema, discard }), result: TraceSummarySchema },
  /**
   * The gate over the whole recording, replayed at the current knobs: time, g, u* and severity at
   * up to `maxPoints` frames (min/max of g per time column, so no excursion is lost), with the
   * rolling accuracy and mean confidence the live stream would have shown at those knobs (and the
   * output calibrator) at the same frames: null before the first labelled frame. What the desk
   * draws for a recording it did not watch live (an offline run, a loaded trace, a recent run),
   * and for any recording once the knobs move while paused.
   */
  'recording.series': {
    params: z.strictObject({ maxPoints: z.number().int().min(100).max(100_000).default(1800) }),
    result: z.strictObject({
      recordingId: z.number().int().positive(),
      settingsVersion: z.number().int().nonnegative(),
      frameCount: z.number().int().nonnegative(),
      tSeconds: z.array(z.number()),
      g: z.array(z.number()),
      uRef: z.array(z.number()),
      severity: z.array(z.number()),
      rollingAccuracy: z.array(z.number().nullable()),
      rollingConfidence: z.array(z.number().nullable()),
      /** The rolling window: the last this many labelled frames. */
      rollingWindowFrames: z.number().int().positive(),
      /** With a condition-aware calibrator on a recording with features: where its condition switches. */
      calibratorConditions: ConditionSwitchesSchema.optional(),
    }),
  },
  /**
   * The output calibrator every view applies after fusion (null switches it off); validated
   * against the model's class count. A new settings version, like a knob change.
   */
  'calibrator.set': { params: z.strictObject({ calibrator: CalibratorSpecSchema.nullable() }), result: KnobsSchema },
  /**
   * Calibrators fitted on the current recording's fused output at the current gate settings
   * (uncalibrated), compared on held-out frames, in the metrics worker (no model call).
   */
  'calibrator.compare': { params: CalibratorCompareParamsSchema, result: CalibratorComparisonSchema },
  /** Split-conformal sets of the output, calibrated on the window's first labelled frames (conformal-schemas.ts). */
  'conformal.sets': { params: ConformalParamsSchema, result: ConformalSetsSchema },
  /** Recent runs: every recording the session made, kept in the app's data folder up to its size limit. */
  'runs.list': { params: empty, result: RecentRunsSchema },
  /**
   * Makes a recent run the current recording (playing stops); when the source it was recorded from
   * is open, its position moves to where the run left off.
   */
  'runs.open': {
    params: z.strictObject({ id: z.string().regex(RECENT_RUN_ID), discard }),
    result: TraceSummarySchema,
  },
  /** A new size limit for the folder (0 keeps nothing); the oldest runs go until it fits. */
  'runs.setLimit': { params: z.strictObject({ limitBytes: RecentRunsLimitSchema }), result: RecentRunsSchema },
  /** Two to eight recent runs at their recorded settings, each against the first (RunsComparisonSchema). */
  'runs.compare': { params: RunsCompareParamsSchema, result: RunsComparisonSchema },
  /** A run's name, tags and notes, replacing what it had (kept beside the folder's index). */
  'runs.annotate': { params: RunsAnnotateParamsSchema, result: RecentRunsSchema },
  'metrics.snapshot': { params: MetricsOptionsSchema, result: MetricsSnapshotSchema },
  /** A/B: the same recorded trace replayed with two settings (no model call). */
  'metrics.compare': {
    params: MetricsCompareParamsSchema,
    result: z.strictObject({
      a: MetricsSnapshotSchema,
      b: MetricsSnapshotSchema,
      /** B - A of the headline figures with paired bootstrap intervals and verdicts (95 %). */
      differences: z.array(PairedDifferenceSchema),
      computeMs: z.number(),
    }),
  },
  /**
   * Writes the tuned-calibrator bundle (NAME.knob.zip) of the current recording at the current
   * knobs and calibrator: manifest, model, report, step graph and Triton repository.
   */
  'bundle.export': {
    params: BundleExportParamsSchema,
    result: BundleExportedSchema,
  },
  /**
   * Restores the knobs and the calibrator from a bundle (checked: archive, schema, format version,
   * every member's SHA-256) or from a knob-settings file or export folder; says what was verified
   * and whether the bundle's model is the one loaded.
   */
  'bundle.import': {
    params: z.strictObject({ path: FilePathSchema }),
    result: z.strictObject({
      knobs: KnobsSchema,
      verification: z.string(),
      /** The bundle's model (null for a settings file): whether it is the one loaded, and whether the bundle holds it. */
      model: z
        .strictObject({ fileName: z.string(), sha256: z.string(), matchesLoaded: z.boolean(), inBundle: z.boolean() })
        .nullable(),
    }),
  },
  /**
   * Loads the model a bundle was tuned with, under the bundle's contract, input and labels: from the
   * bundle itself, or from `modelPath`, a file the user located, refused unless its SHA-256 is the
   * one the bundle names.
   */
  'bundle.loadModel': {
    params: z.strictObject({
      path: FilePathSchema,
      modelPath: FilePathSchema.optional(),
      discard,
      calibrator: calibratorChoice,
    }),
    result: ModelInfoSchema,
  },
  /**
   * The step probe at the current knobs (issue 17): R realisations of severity 1 -> 5 -> 1 of the
   * corruption over the embedded test set at 30 fps, or over the open file source at its frame rate
   * (`over`), recorded through the model once (progress on 'work.progress'; cancelling the call
   * stops it) and replayed at the knobs on every later call with the same parameters, stream and
   * model. Refused while the stream plays.
   */
  'probe.step': { params: StepProbeParamsSchema, result: StepProbeViewSchema },
  /**
   * The frequency probe at the current knobs: sinusoidal severity at log-spaced frequencies up to a
   * third of the frame rate, over the same streams as the step probe, recorded and replayed as it is.
   */
  'probe.frequency': { params: FrequencyProbeParamsSchema, result: FrequencyProbeViewSchema },
  /**
   * Tunes the knobs on the current recording by replay (no model): the metric on its held-out
   * frames over a (zeta, wn) grid and a local refinement, within the constraints, on the backend's
   * tuning threads; the knobs do not change (the desk applies a point itself).
   */
  /**
   * Tunes the knobs on the current recording by replay. `within`: bounds every setting tried and
   * reported stays inside (the desk sends its knobs' ranges, DESK_KNOB_RANGES).
   */
  'tune.run': {
    params: TuneParamsSchema.extend({ within: TuningBoundsSchema.optional() }),
    result: TuneViewSchema,
  },
  /**
   * The paper's analyses (T_eff and CSR by severity, agreement subsets, oracle advantage,
   * polarisation, gate-conditional calibration) of the current recording at the current knobs, by
   * replay (no model); the same figures and words as `knob analyze`.
   */
  'analysis.run': { params: AnalysesParamsSchema, result: AnalysesViewSchema },
  ...FIELD_METHODS,
} as const satisfies Record<string, { params: z.ZodType; result: z.ZodType }>;

export type ApiMethod = keyof typeof API_METHODS;
/** What a caller sends (defaults may be left out). */
export type ApiParams<M extends ApiMethod> = z.input<(typeof API_METHODS)[M]['params']>;
/** What a handler receives: the params after parsing, defaults filled in. */
export type ApiParsedParams<M extends ApiMethod> = z.output<(typeof API_METHODS)[M]['params']>;
export type ApiResult<M extends ApiMethod> = z.output<(typeof API_METHODS)[M]['result']>;

export const API_EVENTS = {
  'knobs.changed': KnobsSchema,
  /** On every transition and whenever the recording's summary changes in the background. */
  'session.state': SessionStateSchema,
  'stream.update': StreamUpdateSchema,
  /** A label changed: the recording's counts and the rolling figures with the label in them. */
  'recording.changed': z.strictObject({ recording: RecordingSummarySchema, rolling: RollingSchema }),
  /** A run was kept (or dropped for the size limit): the list as it is now. */
  'runs.changed': RecentRunsSchema,
  /** Progress of a long call (at most ~10 per second); `finished` at the end. */
  'work.progress': z.strictObject({
    requestId: z.union([z.number(), z.string()]).nullable(),
    task: z.string(),
    done: z.number().int().nonnegative(),
    total: z.number().int().nonnegative().nullable(),
    finished: z.boolean(),
  }),
  /** A frame from the binary path was refused (malformed packet, no camera stream running). */
  'frame.rejected': ErrorPayloadSchema,
} as const satisfies Record<string, z.ZodType>;

export type ApiEvent = keyof typeof API_EVENTS;
export type ApiEventData<E extends ApiEvent> = z.output<(typeof API_EVENTS)[E]>;

export function isApiMethod(method: string): method is ApiMethod {
  return Object.prototype.hasOwnProperty.call(API_METHODS, method);
}
