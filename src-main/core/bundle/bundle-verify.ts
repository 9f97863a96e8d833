import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelOptionsSchema, type ModelOptions } from '../../../src-shared/api/model-options';
import { MANIFEST_MEMBER, parseBundleManifest, type BundleManifest } from '../../../src-shared/bundle/bundle-manifest';
import { KnobError } from '../../../src-shared/errors';
import { parseJsonText } from '../../../src-shared/json-text';
import { createFramePreparer } from '../../../src-shared/frames/prepare-frames';
import { allocateBatchMetadata } from '../../../src-shared/trace/trace-builder';
import { appReadout, EQUIVALENCE_TOLERANCE, readoutDifferences, stepGraphReadout } from '../deploy/step-graph-check';
import type { StepGraphOptions } from '../deploy/step-graph';
import { inputLimit } from '../files/input-limits';
import { readUserFile } from '../files/user-files';
import { loadModel } from '../inference/loaded-model';
import { openSourcePath } from '../sources/open-source';
import { openArchive } from '../files/zip-archive';
import { bundleStepGraph } from './bundle-export';
import { sha256Hex } from '../files/sha256';

/**
 * knob verify, and the desk's import: is a bundle what its manifest says? The archive's own checks
 * (bundle-archive.ts), the manifest's schema and format version, every member's SHA-256 and size
 * (and no member the manifest does not list; the manifest is read and checked before any other
 * member is inflated, and members only up to the sizes it declares), the model's hash against a file the user gives,
 * the deploy section's promise (the step graph and Triton repository it names are there, and a
 * bundle without a step graph is one whose model export could not compose: bundleStepGraph's
 * rule), and the step graph against the app on the first frames of the embedded stream. A failed
 * check throws with its reason; what passed is returned line by line.
 */
export interface VerifiedBundle {
  manifest: BundleManifest;
  members: Map<string, Uint8Array>;
  /** What was checked and found sound, one line each. */
  checks: string[];
}

/** Frames of the embedded stream the equivalence runs on. */
export const VERIFY_FRAMES = 24;

export async function readVerifiedBundle(bytes: Uint8Array, source: string): Promise<VerifiedBundle> {
  const archive = await openArchive(bytes, source);
  const refuse = (message: string): never => {
    throw new KnobError('INVALID_INPUT', `${source}: ${message}`);
  };
  // The manifest first, on its own small limit: nothing else is inflated before it is checked.
  if (!archive.declaredBytes.has(MANIFEST_MEMBER)) refuse(`no ${MANIFEST_MEMBER}`);
  const manifestBytes = await archive.inflate(MANIFEST_MEMBER, inputLimit('manifest'));
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(manifestBytes);
  } catch {
    return refuse(`${MANIFEST_MEMBER} is not UTF-8 text`);
  }
  const manifest = parseBundleManifest(parseJsonText(text, `${source}: ${MANIFEST_MEMBER}`), source);
  const listed = new Map(Object.entries(manifest.members));
  // Only what the manifest lists, each exactly the size it declares, all within one budget.
  let budget = 0;
  for (const [path, expected] of listed) {
    const declared = archive.declaredBytes.get(path);
    if (declared === undefined) refuse(`member '${path}' is listed but missing`);
    if (declared !== expected.bytes)
      refuse(`member '${path}' declares ${declared} bytes in the archive, not the ${expected.bytes} of the manifest`);
    budget += expected.bytes;
  }
  if (budget > inputLimit('decompressed'))
    refuse(
      `the manifest lists ${budget} bytes of members, more than ${inputLimit('decompressed')} (raise it with --input-limit decompressed=SIZE)`,
    );
  for (const path of archive.declaredBytes.keys())
    if (path !== MANIFEST_MEMBER && !listed.has(path)) refuse(`member '${path}' is not listed in the manifest`);
  const members = new Map<string, Uint8Array>([[MANIFEST_MEMBER, manifestBytes]]);
  for (const [path, expected] of listed) {
    const member = await archive.inflate(path, expected.bytes);
    if (member.length !== expected.bytes || sha256Hex(member) !== expected.sha256)
      refuse(`member '${path}' does not match its SHA-256 in the manifest`);
    members.set(path, member);
  }
  for (const file of manifest.model.files)
    if (file.member !== null && listed.get(file.member)?.sha256 !== file.sha256)
      refuse(`the bundled ${file.fileName} is not the model the manifest names`);
  const checks = [
    `archive: ${members.size} members, none hostile`,
    `manifest: format ${manifest.formatVersion}, schema valid`,
    `hashes: all ${listed.size} members match their SHA-256`,
  ];
  return { manifest, members, checks };
}

/** A verified bundle, and whether its step graph was run against the app (the line in `checks` says why not). */
export interface FullyVerifiedBundle extends VerifiedBundle {
  equivalenceChecked: boolean;
}

/**
 * The whole verification. `modelPaths`: files to hold against the manifest's model hashes (and to
 * run the equivalence with when the bundle leaves the model out).
 */
export async function verifyBundle(
  bytes: Uint8Array,
  source: string,
  modelPaths: string[] = [],
): Promise<FullyVerifiedBundle> {
  const verified = await readVerifiedBundle(bytes, source);
  const { manifest, members, checks } = verified;
  const models: Array<Uint8Array | null> = manifest.model.files.map((f) =>
    f.member === null ? null : members.get(f.member)!,
  );
  for (const [i, path] of modelPaths.entries()) {
    const file = manifest.model.files[i];
    if (file === undefined)
      throw new KnobError(
        'INVALID_INPUT',
        `${source}: the bundle names ${manifest.model.files.length} model file(s), not ${i + 1}`,
      );
    const given = await readUserFile(path, 'model');
    if (sha256Hex(given) !== file.sha256)
      throw new KnobError(
        'INVALID_INPUT',
        `${path}: not the model the bundle was tuned with (SHA-256 differs from ${file.fileName}'s)`,
      );
    models[i] = given;
    checks.push(`model: ${path} is ${file.fileName} (SHA-256 matches)`);
  }
  const refuse = (message: string): never => {
    throw new KnobError('INVALID_INPUT', `${source}: ${message}`);
  };
  const { stepGraph, stepGraphNote } = checkDeployMembers(manifest, refuse);
  const given = models.every((m) => m !== null) ? (models as Uint8Array[]) : null;
  if (stepGraph === null) {
    if (given === null) {
      checks.push(
        `equivalence: not checked (${stepGraphNote}; the model is not in the bundle: give it with --model to confirm that no step graph can be built for it)`,
      );
      return { ...verified, equivalenceChecked: false };
    }
    // the exporter's own rule: no step graph only where it cannot build one
    const rebuilt = bundleStepGraph(stepGraphOptionsOf(manifest, given));
    if (rebuilt.graph !== null)
      refuse(
        `the bundle has no step graph, but export builds one for its model and settings (the manifest says "${stepGraphNote}"); export the bundle again`,
      );
    checks.push(`equivalence: not checked (${rebuilt.note})`);
    return { ...verified, equivalenceChecked: false };
  }
  checks.push(`deploy: step graph ${stepGraph} and its Triton repository present`);
  if (given === null) {
    checks.push('equivalence: not checked (the model is not in the bundle; give it with --model to check)');
    return { ...verified, equivalenceChecked: false };
  }
  checks.push(await equivalence(manifest, members.get(stepGraph)!, given));
  return { ...verified, equivalenceChecked: true };
}

/**
 * The deploy section against the members: the step graph it names is a member, the Triton
 * repository comes with it (its config and the same graph as its model), and no step graph comes
 * with its reason. Returns the step graph's member (or null) and the note.
 */
function checkDeployMembers(
  manifest: BundleManifest,
  refuse: (message: string) => never,
): { stepGraph: string; stepGraphNote: string | null } | { stepGraph: null; stepGraphNote: string } {
  const { stepGraph, stepGraphNote, triton } = manifest.deploy;
  const member = (path: string) => (Object.hasOwn(manifest.members, path) ? manifest.members[path]! : null);
  if (stepGraph === null) {
    if (triton !== null)
      refuse(`the manifest names a Triton repository (${triton.root}) but no step graph (deploy.stepGraph is null)`);
    if (stepGraphNote === null)
      refuse('the manifest has no step graph and no deploy.stepGraphNote saying why (export always gives one of them)');
    return { stepGraph, stepGraphNote };
  }
  const graph = member(stepGraph);
  if (graph === null) refuse(`the manifest names the step graph '${stepGraph}', which is not a member of the bundle`);
  if (triton === null)
    refuse(`the manifest names the step graph '${stepGraph}' but no Triton repository (export writes both)`);
  const repository = `${triton.root}/${triton.modelName}`;
  if (member(`${repository}/config.pbtxt`) === null)
    refuse(`the Triton repository has no member '${repository}/config.pbtxt'`);
  if (member(`${repository}/1/model.onnx`)?.sha256 !== graph.sha256)
    refuse(`the Triton repository's '${repository}/1/model.onnx' is missing or not the step graph '${stepGraph}'`);
  return { stepGraph, stepGraphNote };
}

/** What the step graph of a bundle is built from: its models and the manifest's settings. */
function stepGraphOptionsOf(manifest: BundleManifest, models: Uint8Array[]): StepGraphOptions {
  const { contract, adapter, input, classCount } = manifest.model;
  return {
    model: models[0]!,
    ...(models.length > 1 ? { secondModel: models[1]! } : {}),
    contract,
    adapter,
    input,
    gate: manifest.gate,
    calibrator: manifest.calibrator,
    classCount,
  };
}

/** Options that open the bundle's model files at `paths` as the bundle describes it. */
export function bundleModelOptions(manifest: BundleManifest, paths: string[]): ModelOptions {
  const { contract, input, labels, adapter } = manifest.model;
  return ModelOptionsSchema.parse({
    path: paths[0],
    ...(paths.length > 1 ? { secondPath: paths[1] } : {}),
    contract,
    input,
    labels,
    ...(adapter === null ? {} : { t0: adapter.t0, certaintyRule: adapter.certaintyRule }),
  });
}

/** The step graph against the app, on the first VERIFY_FRAMES frames of the embedded stream. */
async function equivalence(manifest: BundleManifest, stepGraph: Uint8Array, models: Uint8Array[]): Promise<string> {
  const { input } = manifest.model;
  const dir = await mkdtemp(join(tmpdir(), 'knob-verify-'));
  try {
    const paths = await Promise.all(
      models.map(async (bytes, i) => {
        const path = join(dir, `model-${i}.onnx`);
        await writeFile(path, bytes);
        return path;
      }),
    );
    // the check is on the CPU: the same arithmetic everywhere, and no GPU provider probed
    const model = await loadModel({ ...bundleModelOptions(manifest, paths), executionProviders: ['cpu'] });
    try {
      const source = await openSourcePath('default', { target: input, labelNames: null });
      const count = VERIFY_FRAMES;
      const frames = new Uint8Array(count * input.width * input.height * input.channels);
      const preparer = createFramePreparer(
        { width: input.width, height: input.height, channels: input.channels },
        { kind: 'none' },
        0,
      );
      for await (const batch of source.batches(count)) {
        preparer.prepare(batch.frames, source.info, count, 0, batch.first, frames, allocateBatchMetadata(count));
        break;
      }
      const dt = 1 / manifest.timing.frameRateHz;
      const check = {
        frames,
        count,
        timestampsSeconds: Float64Array.from({ length: count }, (_, i) => i * dt),
        nominalDtSeconds: dt,
      };
      const app = await appReadout(model, check, manifest.gate, manifest.calibrator);
      const step = await stepGraphReadout(stepGraph, check, input, manifest.gate, manifest.model.classCount);
      const worst = readoutDifferences(step, app);
      const largest = Math.max(worst.gate, worst.uStar, worst.probabilities);
      if (!(largest < EQUIVALENCE_TOLERANCE))
        throw new KnobError(
          'INVALID_INPUT',
          `the step graph differs from the app by ${largest.toExponential(2)} on the embedded stream (limit ${EQUIVALENCE_TOLERANCE})`,
        );
      return `equivalence: step graph = app within ${largest.toExponential(1)} on ${count} frames of the embedded stream (limit ${EQUIVALENCE_TOLERANCE})`;
    } finally {
      await model.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
