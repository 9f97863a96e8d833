import { basename } from 'node:path';
import type { ModelDescription } from '../../../src-shared/api/model-options';
import {
  BUNDLE_FORMAT,
  BUNDLE_FORMAT_VERSION,
  bundleManifestJsonSchema,
  MANIFEST_MEMBER,
  MANIFEST_SCHEMA_MEMBER,
  parseBundleManifest,
  type BundleManifest,
} from '../../../src-shared/bundle/bundle-manifest';
import type { CalibratorSpec } from '../../../src-shared/calibrators/output-calibrator';
import { KnobError } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { Trace } from '../../../src-shared/trace/trace';
import { APP_VERSION } from '../app-version';
import { formatBytes, inputLimit } from '../files/input-limits';
import { sha256Hex } from '../files/sha256';
import { buildStepGraph, type StepGraphOptions } from '../deploy/step-graph';
import { tritonRepository } from '../deploy/triton-repository';
import { analyseRun } from '../engine/run-analysis';
import { runOutputFiles } from '../engine/run-outputs';
import { creationTime } from '../report/creation-time';
import type { StoredProvenance } from '../report/provenance';
import { writeArchive, type ArchiveMember } from '../files/zip-archive';
import { outputBytes } from '../files/output-files';
import { deployReadme } from './deploy-readme';
import { NO_STEPS, type WorkSteps } from '../calls/work-steps';

/**
 * A tuned-calibrator bundle (NAME.knob.zip, issue 15) from what the app has: the recording it was
 * tuned on, the model (description and file bytes), the gate settings and the calibrator.
 *
 *   manifest.json, manifest.schema.json
 *   model/FILE.onnx            (unless left out; its SHA-256 is in the manifest either way)
 *   report/                    metrics.json, report.html and its PNG and SVG figures
 *   deploy/step.onnx           the step graph (step-graph.ts)
 *   deploy/triton/NAME/...     the Triton model repository (triton-repository.ts)
 *   deploy/README.md           how to run each
 */
export interface BundleInput {
  name: string;
  trace: Trace;
  model: ModelDescription;
  /** The model files' bytes, in the description's order (one, or two classifiers). */
  modelFiles: Uint8Array[];
  includeModel: boolean;
  gate: GateSettings;
  calibrator: CalibratorSpec | null;
  provenance: StoredProvenance;
}

export async function buildBundle(
  input: BundleInput,
  /** The work bar's steps (the model's hashes, the report, the step graph, the archive). */
  steps: WorkSteps = NO_STEPS,
): Promise<{ bytes: Uint8Array; manifest: BundleManifest }> {
  const { name, trace, model, gate, calibrator } = input;
  await steps.step('checking the model files');
  if (input.modelFiles.length !== model.paths.length)
    throw new KnobError(
      'INVALID_INPUT',
      `the bundle needs ${model.paths.length} model files, got ${input.modelFiles.length}`,
    );
  input.modelFiles.forEach((bytes, i) => {
    if (sha256Hex(bytes) !== model.sha256[i])
      throw new KnobError(
        'INVALID_INPUT',
        `${model.paths[i]}: the file changed since the model was opened (SHA-256 differs)`,
      );
  });
  if (trace.classCount !== model.classCount)
    throw new KnobError(
      'INVALID_INPUT',
      `the recording has ${trace.classCount} classes and the model ${model.classCount}: not the model it was recorded with`,
    );
  const members: ArchiveMember[] = [];
  const add = (path: string, data: Uint8Array | string) =>
    members.push({ path, bytes: typeof data === 'string' ? new TextEncoder().encode(data) : data });

  // The model, then the report of the run it was tuned on.
  const modelFiles = model.paths.map((path, i) => {
    const fileName = basename(path);
    const member = input.includeModel ? `model/${i === 0 ? '' : 'second-'}${fileName}` : null;
    if (member !== null) add(member, input.modelFiles[i]!);
    return { fileName, member, sha256: model.sha256[i]!, bytes: input.modelFiles[i]!.length };
  });
  // one time stamp for the bundle: its manifest, report and trace say the same (creation-time.ts)
  const createdAt = creationTime();
  await steps.step(`the report of the recording (${trace.frameCount} frames)`);
  const outputs = runOutputFiles(trace, gate, analyseRun(trace, gate, calibrator), input.provenance, null, createdAt);
  let traceSha256: string | null = null;
  for (const file of outputs) {
    const { data } = file;
    if (file.name === 'trace.arrow') traceSha256 = sha256Hex(typeof data === 'string' ? outputBytes(data) : data);
    else add(`report/${file.name}`, outputBytes(data));
  }

  // The step graph and its Triton repository (a model the graph cannot take leaves both out, saying why).
  await steps.step('the step graph and its Triton repository');
  const { graph: stepGraph, note: stepGraphNote } = bundleStepGraph({
    model: input.modelFiles[0]!,
    ...(input.modelFiles.length > 1 ? { secondModel: input.modelFiles[1]! } : {}),
    contract: model.contract,
    adapter: model.adapter,
    input: model.input,
    gate,
    calibrator,
    classCount: model.classCount,
  });
  const tritonRoot = 'deploy/triton';
  if (stepGraph !== null) {
    add('deploy/step.onnx', stepGraph);
    for (const file of tritonRepository(
      { modelName: name, input: model.input, classCount: model.classCount, gate, calibrator },
      stepGraph,
    ))
      add(`${tritonRoot}/${file.path}`, file.bytes);
  }
  const frameRateHz = 1 / trace.nominalDtSeconds;
  add(
    'deploy/README.md',
    deployReadme({
      name,
      gate,
      input: model.input,
      classCount: model.classCount,
      frameRateHz,
      stepGraph: stepGraph !== null,
      calibrator,
    }),
  );
  add(MANIFEST_SCHEMA_MEMBER, `${JSON.stringify(bundleManifestJsonSchema(), null, 1)}\n`);

  const manifest: BundleManifest = {
    format: BUNDLE_FORMAT,
    formatVersion: BUNDLE_FORMAT_VERSION,
    name,
    createdAt: createdAt.toISOString(),
    gate,
    timing: { frameRateHz, irregularIntervals: 'coefficients from each frame interval dt' },
    model: {
      contract: model.contract,
      files: modelFiles,
      adapter: model.adapter,
      classCount: model.classCount,
      labels: model.labelNames,
      input: model.input,
    },
    calibrator,
    deploy: {
      stepGraph: stepGraph === null ? null : 'deploy/step.onnx',
      stepGraphNote,
      triton: stepGraph === null ? null : { root: tritonRoot, modelName: name },
      readme: 'deploy/README.md',
    },
    report: { metrics: 'report/metrics.json', html: 'report/report.html' },
    provenance: {
      appVersion: APP_VERSION,
      source: input.provenance.source,
      sourceIdentity: input.provenance.sourceIdentity,
      classMapping: input.provenance.classMapping,
      origin: input.provenance.origin,
      frames: trace.frameCount,
      traceSha256,
    },
    members: Object.fromEntries(members.map((m) => [m.path, { sha256: sha256Hex(m.bytes), bytes: m.bytes.length }])),
  };
  // What is written is what a reader accepts.
  parseBundleManifest(manifest, `${name}.knob.zip`);
  const manifestText = `${JSON.stringify(manifest, null, 1)}\n`;
  const manifestBytes = Buffer.byteLength(manifestText, 'utf8');
  if (manifestBytes > inputLimit('manifest'))
    throw new KnobError(
      'INVALID_INPUT',
      `${name}.knob.zip: its manifest (with the calibrator) would be ${formatBytes(manifestBytes)}, over the manifest limit of ${formatBytes(inputLimit('manifest'))} that reading the bundle applies (raise it with --input-limit manifest=SIZE or KNOB_INPUT_LIMITS)`,
    );
  add(MANIFEST_MEMBER, manifestText);
  await steps.step(`archiving ${members.length} members`);
  return { bytes: writeArchive(members), manifest };
}

/**
 * The rule for a bundle's step graph, which export follows and `knob verify` holds a bundle to:
 * a bundle has the step graph whenever its models and settings can be composed into one (every
 * contract, whatever the models name their values); it goes without one only when the builder
 * refuses them (custom operator domains, an opset before 13, a model count that does not fit the
 * contract, not one image input, a classifier without exactly one output, a single classifier
 * without its adapter, a Knob-native model without its outputs, a feature calibrator on a model
 * without features), and then says why in deploy.stepGraphNote.
 */
export function bundleStepGraph(
  options: StepGraphOptions,
): { graph: Uint8Array; note: null } | { graph: null; note: string } {
  try {
    return { graph: buildStepGraph(options), note: null };
  } catch (error) {
    if (!(error instanceof KnobError)) throw error;
    return { graph: null, note: `no step graph: ${error.message}` };
  }
}
