import { z } from 'zod';
import { GateSettingsSchema } from '../gate/gate-settings';
import { CorruptionScheduleSchema } from '../corruptions/schedule';
import { ModelDescriptionSchema, ModelOptionsSchema, type ModelDescription } from './model-options';

/**
 * The typed API between the renderer and the backend (ARCHITECTURE.md, src-shared/api).
 * Each method has a params schema and a result schema; each event a data schema. The backend
 * validates every request against these before it runs anything; TypeScript types are inferred
 * from the same schemas, so the contract cannot drift from its checks.
 */

const filePath = z.string().min(1).max(4096);

export const KnobsSchema = z.strictObject({
  gate: GateSettingsSchema,
  /** Incremented on every accepted change; every output records the version it used. */
  version: z.number().int().nonnegative(),
});
export type Knobs = z.infer<typeof KnobsSchema>;

export const ModelInfoSchema = ModelDescriptionSchema;
export type ModelInfo = ModelDescription;

export const SourceKindSchema = z.enum(['embedded', 'dataset', 'folder', 'video', 'camera']);

export const SourceOpenParamsSchema = z.strictObject({
  kind: SourceKindSchema,
  path: filePath.optional(),
  frameRateHz: z.number().positive().max(1000).optional(),
  /** Any source can carry a corruption schedule (applied to model-sized frames), with its seed. */
  schedule: CorruptionScheduleSchema.optional(),
  seed: z.number().int().nonnegative().max(0xffffffff).optional(),
});

export const SourceInfoSchema = z.strictObject({
  kind: SourceKindSchema,
  description: z.string(),
  frameCount: z.number().int().nonnegative().nullable(),
  frameRateHz: z.number().positive(),
  hasLabels: z.boolean(),
  labelNames: z.array(z.string()).nullable(),
  timestampSource: z.enum(['pts', 'declared-rate', 'capture']),
});

/** The live view's numbers for the latest frame, at most ~30 times a second (T_eff null when infinite). */
export const StreamUpdateSchema = z.strictObject({
  frame: z.number().int().nonnegative(),
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
  metrics: z.array(z.strictObject({ identity: z.string(), value: z.number().nullable() })),
  /** Exact accuracy and mean confidence over the recent labelled frames (sliding window). */
  rolling: z.array(z.strictObject({ name: z.string(), identity: z.string(), value: z.number() })),
  /** The frame as the model saw it (fitted to its input and corrupted), 8-bit, base64. */
  image: z.strictObject({
    width: z.number().int().positive(),
    height: z.number().int().positive(),
    channels: z.union([z.literal(1), z.literal(3)]),
    base64: z.string(),
  }),
  corruption: z.string().nullable(),
  severity: z.number(),
});

export const StreamStateSchema = z.strictObject({
  running: z.boolean(),
  /** Next source frame to play (the position a paused stream resumes from). */
  position: z.number().int().nonnegative(),
  framesProcessed: z.number().int().nonnegative(),
  framesDropped: z.number().int().nonnegative(),
  /** Why the stream stopped or what went wrong, when it did. */
  error: z.strictObject({ code: z.string(), message: z.string() }).nullable(),
});

export const TraceSummarySchema = z.strictObject({
  path: z.string(),
  frameCount: z.number().int().nonnegative(),
  classCount: z.number().int().positive(),
});

export const RecordedFrameSchema = StreamUpdateSchema.pick({
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
}).extend({ image: StreamUpdateSchema.shape.image.nullable() });

const MetricEntrySchema = z.strictObject({ name: z.string(), identity: z.string(), value: z.number().nullable() });

export const METRIC_GROUPINGS = ['none', 'severity', 'corruption', 'predicted-class', 'gate-bucket'] as const;

export const MetricsSnapshotParamsSchema = z.strictObject({
  /** Only the last N recorded frames (absent: all). */
  lastFrames: z.number().int().positive().optional(),
  groupBy: z.enum(METRIC_GROUPINGS).default('none'),
  /** 'light' leaves out the resampling (bootstrap intervals, smooth-curve band): for refreshes during playback. */
  detail: z.enum(['full', 'light']).default('full'),
});

export const MetricsSnapshotSchema = z.strictObject({
  settingsVersion: z.number().int().nonnegative(),
  frameCount: z.number().int().nonnegative(),
  labelledFrameCount: z.number().int().nonnegative(),
  /** Which frames: 'all recorded frames' or 'last N recorded frames'. */
  window: z.string(),
  values: z.array(MetricEntrySchema),
  /** Bootstrap intervals of the headline values, keyed by the identity of the value. */
  intervals: z.array(z.strictObject({ identity: z.string(), lo: z.number(), hi: z.number(), method: z.string() })),
  /** Reliability diagram of the fused output (bins with count, confidence, accuracy, Wilson interval). */
  reliability: z
    .strictObject({
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
    })
    .nullable(),
  /** Smooth reliability curve (SmoothECE kernel) with its bootstrap band. */
  smooth: z
    .strictObject({
      identity: z.string(),
      t: z.array(z.number()),
      accuracy: z.array(z.number()),
      bandLo: z.array(z.number()),
      bandHi: z.array(z.number()),
    })
    .nullable(),
  histogram: z
    .strictObject({ identity: z.string(), edges: z.array(z.number()), counts: z.array(z.number()) })
    .nullable(),
  groupBy: z.enum(METRIC_GROUPINGS),
  groups: z.array(z.strictObject({ key: z.string(), count: z.number().int(), values: z.array(MetricEntrySchema) })),
  /** How long the replay and metrics took, in milliseconds (no model call). */
  computeMs: z.number(),
});

export const BundleExportParamsSchema = z.strictObject({
  path: filePath,
  includeModel: z.boolean().default(false),
});

export const AppInfoSchema = z.strictObject({
  name: z.string(),
  version: z.string(),
  /** Which methods this backend serves now; the others answer NOT_AVAILABLE with the reason. */
  availableMethods: z.array(z.string()),
});

const empty = z.strictObject({});

export const API_METHODS = {
  'app.info': { params: empty, result: AppInfoSchema },
  'knobs.get': { params: empty, result: KnobsSchema },
  /** Partial update; the reply is the whole new setting with its version. */
  'knobs.set': { params: z.strictObject({ gate: GateSettingsSchema.partial() }), result: KnobsSchema },
  'model.load': { params: ModelOptionsSchema, result: ModelInfoSchema },
  'model.info': { params: empty, result: ModelInfoSchema.nullable() },
  'source.open': { params: SourceOpenParamsSchema, result: SourceInfoSchema },
  /** Plays (or resumes) the open source at `speed` x real time. */
  'stream.start': {
    params: z.strictObject({ speed: z.number().positive().max(16).optional(), loop: z.boolean().optional() }),
    result: StreamStateSchema,
  },
  'stream.stop': { params: empty, result: StreamStateSchema },
  /** Moves a file source to a frame, paused, with a fresh recording. */
  'stream.seek': { params: z.strictObject({ frame: z.number().int().nonnegative() }), result: StreamStateSchema },
  /** A recorded frame replayed at the current knobs (scrubbing): the live view's numbers and, while kept, its image. */
  'trace.frame': { params: z.strictObject({ frame: z.number().int().nonnegative() }), result: RecordedFrameSchema },
  /** The whole open file source through the model at full speed (batched), as the current trace; progress on 'work.progress', cancellable. */
  'stream.runOffline': {
    params: z.strictObject({ maxFrames: z.number().int().positive().optional() }),
    result: z.strictObject({
      framesProcessed: z.number().int().nonnegative(),
      wallMs: z.number(),
      error: z.strictObject({ code: z.string(), message: z.string() }).nullable(),
    }),
  },
  /** Cancels the long task in progress (offline run); what it computed so far is kept. */
  'work.cancel': { params: empty, result: z.strictObject({ cancelled: z.boolean() }) },
  /** Back to the first frame with a fresh recording, paused. */
  'stream.rewind': { params: empty, result: StreamStateSchema },
  /** The operator's reset: the gate returns to rest at g0 before the next frame. */
  'stream.resetGate': { params: empty, result: StreamStateSchema },
  'trace.save': { params: z.strictObject({ path: filePath }), result: TraceSummarySchema },
  'trace.load': { params: z.strictObject({ path: filePath }), result: TraceSummarySchema },
  'metrics.snapshot': { params: MetricsSnapshotParamsSchema, result: MetricsSnapshotSchema },
  /** Until the bundle issue lands: writes the settings (knob-settings.json) and the metrics report of the current trace into a folder. */
  'bundle.export': {
    params: BundleExportParamsSchema,
    result: z.strictObject({ path: z.string(), files: z.array(z.string()) }),
  },
  /** Restores knob settings from an exported folder or settings file; says what was verified. */
  'bundle.import': {
    params: z.strictObject({ path: filePath }),
    result: z.strictObject({ knobs: KnobsSchema, verification: z.string() }),
  },
  /** Operator feedback on a recorded frame: its true class (-1 clears it); metrics use it at once. */
  'stream.label': {
    params: z.strictObject({ frame: z.number().int().nonnegative(), label: z.number().int().min(-1) }),
    result: z.strictObject({ frame: z.number().int(), label: z.number().int(), labelledFrames: z.number().int() }),
  },
  /** A/B: the same recorded trace replayed with two settings (no model call). */
  'metrics.compare': {
    params: z.strictObject({
      a: GateSettingsSchema,
      b: GateSettingsSchema,
      lastFrames: z.number().int().positive().optional(),
    }),
    result: z.strictObject({ a: MetricsSnapshotSchema, b: MetricsSnapshotSchema, computeMs: z.number() }),
  },
} as const satisfies Record<string, { params: z.ZodType; result: z.ZodType }>;

export type ApiMethod = keyof typeof API_METHODS;
export type ApiParams<M extends ApiMethod> = z.input<(typeof API_METHODS)[M]['params']>;
export type ApiResult<M extends ApiMethod> = z.output<(typeof API_METHODS)[M]['result']>;

export const API_EVENTS = {
  'knobs.changed': KnobsSchema,
  'stream.state': StreamStateSchema,
  'stream.update': StreamUpdateSchema,
  /** Progress of a long task (at most ~10 per second); done = total (or finished: true) at the end. */
  'work.progress': z.strictObject({
    task: z.string(),
    done: z.number().int().nonnegative(),
    total: z.number().int().nonnegative().nullable(),
    finished: z.boolean(),
  }),
  /** A frame from the binary path was refused (malformed packet, no camera stream running). */
  'frame.rejected': z.strictObject({ code: z.string(), message: z.string() }),
} as const satisfies Record<string, z.ZodType>;

export type ApiEvent = keyof typeof API_EVENTS;
export type ApiEventData<E extends ApiEvent> = z.output<(typeof API_EVENTS)[E]>;

export function isApiMethod(method: string): method is ApiMethod {
  return Object.prototype.hasOwnProperty.call(API_METHODS, method);
}
