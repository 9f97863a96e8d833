import { z } from 'zod';
import { ModelDescriptionSchema, type ModelDescription } from '../../../src-shared/api/model-options';
import { describeCalibrator, type CalibratorSpec } from '../../../src-shared/calibrators';
import { CorruptionScheduleSchema, describeSchedule, type CorruptionSchedule } from '../../../src-shared/corruptions';
import { GATE_VARIANT_LABELS, type GateSettings } from '../../../src-shared/gate/gate-settings';
import { APP_NAME, APP_VERSION } from '../app-version';
import type { Trace } from '../../../src-shared/trace/trace';
import type { SourceInfo } from '../../../src-shared/api/session-state';
import { describeSourceIdentity, SourceIdentitySchema } from '../../../src-shared/api/source-identity';
import { ClassMappingSchema, describeClassMapping } from '../../../src-shared/labels/class-names';

/**
 * What a trace's caller knew when it was made (model and its SHA-256, source, corruption schedule
 * and seed, what kind of trace it is). A trace file keeps it in its context, so a replay, a reload
 * or a recent run reports the same rows as the run that made it. Read back from a file, it is
 * validated like any other input; a file without it reports "unknown".
 */
export const StoredProvenanceSchema = z.strictObject({
  model: ModelDescriptionSchema.pick({
    paths: true,
    sha256: true,
    contract: true,
    executionProvider: true,
    adapter: true,
  }).nullable(),
  source: z.string().max(4096),
  /** The source's file, folder or camera with its hash (null: not recorded, a trace from before issue 27). */
  sourceIdentity: SourceIdentitySchema.nullable().default(null),
  /** How the source's class names became the model's classes (null: labels were class indices, or none). */
  classMapping: ClassMappingSchema.nullable().default(null),
  /** Label files imported into the recording (each with its hash and the frames it labelled). */
  labelImports: z
    .array(z.strictObject({ file: SourceIdentitySchema, frames: z.number().int().nonnegative() }))
    .max(1000)
    .default([]),
  /**
   * The corruption schedule and stream seed in force from each frame on (a live recording's edits
   * add entries); null when unknown.
   */
  schedule: z
    .array(
      z.strictObject({
        fromFrame: z.number().int().nonnegative(),
        schedule: CorruptionScheduleSchema,
        seed: z.number().int(),
      }),
    )
    .max(10_000)
    .nullable(),
  /** What the trace is: a live recording, an offline run, a replay of a saved trace. */
  origin: z.string().max(4096),
});
export type StoredProvenance = z.infer<typeof StoredProvenanceSchema>;

/** Where a report's numbers came from: the stored part plus what the run itself fills in. */
export interface Provenance extends StoredProvenance {
  frames: number;
  labelledFrames: number;
  /** The slice of the source the frames are (its first and last source frame), when recorded. */
  sourceFrames: { first: number; last: number } | null;
  settings: GateSettings;
  /** The output calibrator the figures are of (null: the fused output as it is). */
  calibrator: CalibratorSpec | null;
  createdAt: string;
}

/** The first and last source frame a trace's frames came from (its `source_frame` column), when it has one. */
export function sourceFramesOf(trace: Pick<Trace, 'frameCount' | 'metadata'>): { first: number; last: number } | null {
  const column = trace.metadata.source_frame;
  if (column?.kind !== 'number' || trace.frameCount === 0) return null;
  let first = Infinity;
  let last = -Infinity;
  for (let i = 0; i < trace.frameCount; i++) {
    const frame = column.values[i]!;
    if (frame < first) first = frame;
    if (frame > last) last = frame;
  }
  return Number.isFinite(first) ? { first, last } : null;
}

/** The provenance kept in a trace file's context, or null when it has none or it is malformed. */
export function storedProvenanceOf(context: Record<string, unknown>): StoredProvenance | null {
  const parsed = StoredProvenanceSchema.safeParse(context.provenance);
  return parsed.success ? parsed.data : null;
}

/** The stored provenance of a trace made now, from the model and source that make it. */
export function runProvenance(run: {
  model: ModelDescription | null;
  source: SourceInfo;
  schedule: CorruptionSchedule | null;
  seed: number;
  origin: string;
}): StoredProvenance {
  const m = run.model;
  return {
    model:
      m === null
        ? null
        : {
            paths: m.paths,
            sha256: m.sha256,
            contract: m.contract,
            executionProvider: m.executionProvider,
            adapter: m.adapter,
          },
    source: `${run.source.description} (timestamps: ${run.source.timestampSource})`,
    sourceIdentity: run.source.identity,
    classMapping: run.source.classMapping,
    labelImports: [],
    schedule: run.schedule === null ? null : [{ fromFrame: 0, schedule: run.schedule, seed: run.seed }],
    origin: run.origin,
  };
}

/** The provenance of a trace whose origin is not recorded (a trace file from elsewhere). */
export function unknownProvenance(source: string, origin: string): StoredProvenance {
  return { model: null, source, sourceIdentity: null, classMapping: null, labelImports: [], schedule: null, origin };
}

export function describeSettings(s: GateSettings): string {
  const reset = s.mode === 'reset' ? `, tau ${s.tauSeconds} s, g0 ${s.g0}` : `, g0 ${s.g0}`;
  const tustin = s.discretization === 'tustin' && s.tustinPrewarp ? ' pre-warped' : '';
  return `${GATE_VARIANT_LABELS[s.variant]} (${s.variant}), zeta ${s.zeta}, wn ${s.wnRadPerSec} rad/s, ${s.mode} mode, ${s.discretization}${tustin}${reset}`;
}

type ScheduleHistory = NonNullable<StoredProvenance['schedule']>;

/** One value in force throughout, or each value with the frame it applies from. */
function describeHistory(history: ScheduleHistory, describe: (entry: ScheduleHistory[number]) => string): string {
  const values = history.map(describe);
  if (values.every((v) => v === values[0]) && history[0].fromFrame === 0) return values[0];
  return history.map((h, i) => `from frame ${h.fromFrame}: ${values[i]}`).join('; ');
}

export const PROVENANCE_ROWS = [
  'model',
  'model SHA-256',
  'contract',
  'execution provider',
  'source',
  'source file',
  'class names',
  'label files',
  'frames',
  'corruption schedule',
  'seed',
  'gate settings',
  'output calibrator',
  'trace',
  'made by',
  'created',
] as const;

/** The rows every report shows, in the same order (the desk's export and the CLI alike). */
export function provenanceRows(p: Provenance): Array<[string, string]> {
  const model = p.model;
  const adapter = model?.adapter ? `; adapter T0 ${model.adapter.t0}, u* by ${model.adapter.certaintyRule}` : '';
  const values: Record<(typeof PROVENANCE_ROWS)[number], string> = {
    model: model === null ? 'unknown (not recorded with the trace)' : model.paths.join(' + '),
    'model SHA-256': model === null ? 'unknown' : model.sha256.join(' + '),
    contract: model === null ? 'unknown' : `${model.contract}${adapter}`,
    'execution provider': model === null ? 'unknown' : model.executionProvider,
    source: p.source,
    'source file': describeSourceIdentity(p.sourceIdentity),
    'class names':
      p.classMapping === null
        ? 'none by name (labels are class indices, or there are none)'
        : describeClassMapping(p.classMapping),
    'label files':
      p.labelImports.length === 0
        ? 'none imported'
        : p.labelImports.map((l) => `${describeSourceIdentity(l.file)}: ${l.frames} frames`).join('; '),
    frames: `${p.frames} (${p.labelledFrames} labelled)${p.sourceFrames === null ? '' : `: source frames ${p.sourceFrames.first} to ${p.sourceFrames.last}`}`,
    'corruption schedule':
      p.schedule === null ? 'unknown' : describeHistory(p.schedule, (h) => describeSchedule(h.schedule)),
    seed: p.schedule === null ? 'unknown' : describeHistory(p.schedule, (h) => String(h.seed)),
    'gate settings': describeSettings(p.settings),
    'output calibrator': p.calibrator === null ? 'none (the fused output as it is)' : describeCalibrator(p.calibrator),
    trace: p.origin,
    'made by': `${APP_NAME} ${APP_VERSION}`,
    created: p.createdAt,
  };
  return PROVENANCE_ROWS.map((row) => [row, values[row]]);
}

/**
 * The provenance of a trace file read from `path`: what it was recorded with, and that it was
 * loaded from there (the desk's trace.load and `knob export` say the same, so their bundles agree).
 */
export function loadedTraceProvenance(context: Record<string, unknown>, path: string): StoredProvenance {
  const recorded = storedProvenanceOf(context);
  return recorded === null
    ? unknownProvenance(`trace ${path}`, `loaded from ${path}`)
    : { ...recorded, origin: `${recorded.origin}, loaded from ${path}` };
}
