import { rm } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { ModelDescription } from '../../../src-shared/api/model-options';
import { BUNDLE_EXTENSION, BUNDLE_PATH_RULE } from '../../../src-shared/api/file-kinds';
import type { BundleManifest } from '../../../src-shared/bundle/bundle-manifest';
import { checkCalibratorFor, type CalibratorSpec } from '../../../src-shared/calibrators';
import { KnobError } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { requireEveryClass } from '../../../src-shared/trace/kept-classes';
import type { Trace } from '../../../src-shared/trace/trace';
import { buildBundle } from '../bundle/bundle-export';
import { checkOutputFolder, writeOutputFile } from '../files/output-files';
import { readUserFile } from '../files/user-files';
import { checkTraceRecordedWith } from '../recording/model-binding';
import type { StoredProvenance } from '../report/provenance';
import { workSteps, type WorkStepOptions } from '../calls/work-steps';

/** The steps an export reports: the model read, the bundle's four, the file written. */
const EXPORT_STEPS = 6;

/** Refuses a bundle path not named NAME.knob.zip (before anything is read). */
export function checkBundlePath(path: string): void {
  if (!path.endsWith(BUNDLE_EXTENSION)) throw new KnobError('INVALID_INPUT', `${path}: ${BUNDLE_PATH_RULE}`);
}

export interface ExportBundleInput {
  /** Where the bundle goes: NAME.knob.zip. */
  path: string;
  trace: Trace;
  /** How the recording is named in a refusal (its file, or its description). */
  traceName: string;
  provenance: StoredProvenance;
  model: ModelDescription;
  gate: GateSettings;
  calibrator: CalibratorSpec | null;
  includeModel: boolean;
}

export interface ExportedBundle {
  path: string;
  bytes: number;
  /** Members, the manifest included. */
  members: number;
  manifest: BundleManifest;
}

/**
 * The tuned-calibrator bundle of a recording (bundle-export.ts), the one export of the desk
 * (bundle.export) and of `knob export`: the same checks in the same order with the same words
 * (the bundle's name, a trace recorded with another model, the calibrator against the model's
 * classes, the output folder) before the model files are read and the bundle built.
 */
export async function exportBundle(input: ExportBundleInput, progress: WorkStepOptions = {}): Promise<ExportedBundle> {
  const { path, model } = input;
  checkBundlePath(path);
  requireEveryClass(input.trace, 'a bundle (its calibration data, reliability and step graph)');
  checkTraceRecordedWith(input.traceName, input.provenance, model);
  if (input.calibrator !== null) checkCalibratorFor(input.calibrator, model.classCount);
  await checkOutputFolder(dirname(path));
  // reading the model, the bundle's four steps (bundle-export.ts), writing
  const steps = workSteps(`the export of ${basename(path)}`, EXPORT_STEPS, progress);
  await steps.step(`reading ${model.paths.map((p) => basename(p)).join(' + ')}`);
  const modelFiles = await Promise.all(model.paths.map((p) => readUserFile(p, 'model')));
  const bundle = await buildBundle(
    {
      name: basename(path).slice(0, -BUNDLE_EXTENSION.length),
      trace: input.trace,
      model,
      modelFiles,
      includeModel: input.includeModel,
      gate: input.gate,
      calibrator: input.calibrator,
      provenance: input.provenance,
    },
    steps,
  );
  await steps.step(`writing ${basename(path)}`);
  const written = await writeOutputFile(path, bundle.bytes);
  // a cancel that arrived during the write: what the operator was told (nothing written) holds
  if (progress.signal?.aborted === true) {
    await rm(written, { force: true });
    throw new KnobError('CANCELLED', `the export of ${basename(path)} was cancelled`);
  }
  const members = Object.keys(bundle.manifest.members).length + 1;
  return { path: written, bytes: bundle.bytes.length, members, manifest: bundle.manifest };
}
