import { z } from 'zod';
import { MODEL_CONTRACTS } from '../api/model-options';
import { SourceIdentitySchema } from '../api/source-identity';
import { ClassMappingSchema } from '../labels/class-names';
import { CalibratorSpecSchema } from '../calibrators/output-calibrator';
import { KnobError } from '../errors';
import { InputSpecSchema } from '../frames/input-spec';
import { CERTAINTY_RULES } from '../fusion/gate-target';
import { GateSettingsSchema } from '../gate/gate-settings';
import { parseWithSchema } from '../zod-issues';
import { FrameRateHzSchema } from '../gate/accepted-ranges';

/**
 * manifest.json of a tuned-calibrator bundle (NAME.knob.zip, issue 15): everything needed to run
 * the tuned setting outside Knob Studio and to check that a bundle is what it says. The same
 * schema ships in every bundle as manifest.schema.json (JSON Schema, generated from this one).
 *
 * Versioning: formatVersion is MAJOR.MINOR. A reader takes any minor version of its major (minor
 * versions only add optional fields) and refuses a newer major with a message that says so.
 */
export const BUNDLE_FORMAT = 'knob-bundle';
export const BUNDLE_FORMAT_MAJOR = 1;
export const BUNDLE_FORMAT_VERSION = `${BUNDLE_FORMAT_MAJOR}.0`;
export const MANIFEST_MEMBER = 'manifest.json';
export const MANIFEST_SCHEMA_MEMBER = 'manifest.schema.json';

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 is 64 lowercase hex digits');
/** A member's path in the archive (bundle-archive.ts refuses anything else when reading). */
const memberPath = z
  .string()
  .min(1)
  .max(512)
  .regex(/^[^/\\][^\\]*$/, 'a member path is relative, with / separators');

export const BundleManifestSchema = z.strictObject({
  format: z.literal(BUNDLE_FORMAT),
  formatVersion: z.string().regex(/^\d+\.\d+$/),
  /** The bundle's name (NAME in NAME.knob.zip; the Triton model's name). */
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/, 'letters, digits, _ . - (it names files and a Triton model)'),
  createdAt: z.iso.datetime(),
  gate: GateSettingsSchema,
  timing: z.strictObject({
    /** The frame rate the stream was tuned at; its interval is the first frame's dt. */
    frameRateHz: FrameRateHzSchema,
    /** How frame intervals enter: the step graph computes the coefficients from each frame's dt. */
    irregularIntervals: z.literal('coefficients from each frame interval dt'),
  }),
  model: z.strictObject({
    contract: z.enum(MODEL_CONTRACTS),
    /** One file, or two for the two-classifiers contract; member null when left out of the bundle. */
    files: z
      .array(
        z.strictObject({
          fileName: z.string().min(1).max(255),
          member: memberPath.nullable(),
          sha256,
          bytes: z.number().int().nonnegative(),
        }),
      )
      .min(1)
      .max(2),
    adapter: z.strictObject({ t0: z.number().min(1), certaintyRule: z.enum(CERTAINTY_RULES) }).nullable(),
    classCount: z.number().int().min(2).max(100_000),
    labels: z.array(z.string().max(256)),
    input: InputSpecSchema,
  }),
  calibrator: CalibratorSpecSchema.nullable(),
  deploy: z.strictObject({
    /** The ONNX step graph, or null with the reason (a model the graph cannot take). */
    stepGraph: memberPath.nullable(),
    stepGraphNote: z.string().max(1024).nullable(),
    /** The Triton model repository's folder in the bundle and its model's name. */
    triton: z.strictObject({ root: memberPath, modelName: z.string().min(1).max(128) }).nullable(),
    readme: memberPath,
  }),
  report: z.strictObject({ metrics: memberPath, html: memberPath }).nullable(),
  provenance: z.strictObject({
    appVersion: z.string().max(64),
    source: z.string().max(4096),
    /** The source file, folder or camera with its hash (null: not recorded with the trace). */
    sourceIdentity: SourceIdentitySchema.nullable().default(null),
    /** How the source's class names became the model's classes (null: none by name). */
    classMapping: ClassMappingSchema.nullable().default(null),
    origin: z.string().max(4096),
    frames: z.number().int().nonnegative(),
    /** SHA-256 of the trace the setting was tuned on (its Arrow file as Knob Studio writes it). */
    traceSha256: sha256.nullable(),
  }),
  /** Every other member of the bundle, with its SHA-256 and size. */
  members: z.record(memberPath, z.strictObject({ sha256, bytes: z.number().int().nonnegative() })),
});
export type BundleManifest = z.infer<typeof BundleManifestSchema>;

/**
 * Reads a manifest: a newer major format version is refused with a clear message before the rest
 * is checked (its fields may mean something this version does not know); then the whole schema,
 * every offending field named.
 */
export function parseBundleManifest(raw: unknown, source: string): BundleManifest {
  const head = z.looseObject({ format: z.unknown(), formatVersion: z.unknown() }).safeParse(raw);
  if (!head.success || head.data.format !== BUNDLE_FORMAT)
    throw new KnobError(
      'INVALID_INPUT',
      `${source}: not a Knob Studio bundle manifest (format is not '${BUNDLE_FORMAT}')`,
    );
  const version = head.data.formatVersion;
  const major = typeof version === 'string' && /^\d+\.\d+$/.test(version) ? Number(version.split('.')[0]) : NaN;
  if (major > BUNDLE_FORMAT_MAJOR)
    throw new KnobError(
      'INVALID_INPUT',
      `${source}: bundle format ${version} is newer than this Knob Studio reads (${BUNDLE_FORMAT_MAJOR}.x); update Knob Studio to open it`,
    );
  return parseWithSchema(BundleManifestSchema, raw, {
    code: 'INVALID_INPUT',
    what: `${source}: invalid manifest`,
    root: 'manifest',
  });
}

/** The manifest schema as JSON Schema (draft 2020-12), shipped in every bundle. */
export function bundleManifestJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(BundleManifestSchema, { io: 'input' }),
    $id: `https://knob-studio.invalid/schemas/bundle-manifest-${BUNDLE_FORMAT_VERSION}.json`,
    title: `Knob Studio bundle manifest, format ${BUNDLE_FORMAT_VERSION}`,
  };
}
