import type { ModelDescription } from '../../../src-shared/api/model-options';
import { describeCalibrator, type CalibratorSpec } from '../../../src-shared/calibrators';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { readVerifiedBundle } from '../bundle/bundle-verify';
import { readUserFile } from '../files/user-files';
import { readSettingsFile, SETTINGS_FORMAT_VERSION } from '../recording/settings-file';
import { BUNDLE_EXTENSION } from '../../../src-shared/api/file-kinds';
import { basename } from 'node:path';
import { workSteps, type WorkStepOptions } from '../calls/work-steps';

/** Knobs read back from a bundle or a settings file, with what was checked. */
export interface ImportedKnobs {
  gate: GateSettings;
  calibrator: CalibratorSpec | null;
  /** The SHA-256 of the model(s) the knobs were tuned with, or null where the file does not say. */
  modelSha256: string[] | null;
  /** One line: what was verified, the model against the loaded one, the calibrator. */
  verification: string;
  /** A bundle's model, or null for a settings file. */
  bundleModel: { fileName: string; sha256: string; matchesLoaded: boolean; inBundle: boolean } | null;
}

/**
 * The knobs and output calibrator of a tuned-calibrator bundle (NAME.knob.zip, verified: format,
 * hashes, members) or of a knob-settings file or export folder, the desk's bundle.import and every
 * command's `--settings` alike, with the model they were tuned with (held against the model
 * `loaded`, when one is, in the verification line; the callers apply the model-binding rule).
 */
export async function importKnobs(
  path: string,
  loaded: ModelDescription | null,
  progress: WorkStepOptions = {},
): Promise<ImportedKnobs> {
  if (path.endsWith(BUNDLE_EXTENSION)) return importBundle(path, loaded, progress);
  const file = await readSettingsFile(path);
  const current = loaded?.paths.join(' + ') ?? null;
  const modelNote =
    file.model === null
      ? 'no model recorded'
      : file.model === current
        ? 'same model as the one loaded'
        : `exported with ${file.model}, the loaded model is ${current ?? 'none'}`;
  return {
    gate: file.gate,
    calibrator: file.calibrator,
    modelSha256: file.modelSha256 ?? null,
    verification: `settings valid (knob-settings format ${SETTINGS_FORMAT_VERSION}); ${modelNote}; ${calibratorNote(file.calibrator)}`,
    bundleModel: null,
  };
}

async function importBundle(
  path: string,
  loaded: ModelDescription | null,
  progress: WorkStepOptions,
): Promise<ImportedKnobs> {
  const steps = workSteps(`the import of ${basename(path)}`, 2, progress);
  await steps.step(`reading ${basename(path)}`);
  const bytes = await readUserFile(path, 'bundle');
  await steps.step(`verifying ${basename(path)} (format, members, hashes)`);
  const { manifest, members, checks } = await readVerifiedBundle(bytes, path);
  const file = manifest.model.files[0]!;
  const hashes = manifest.model.files.map((f) => f.sha256);
  const matchesLoaded = loaded !== null && loaded.sha256.join() === hashes.join();
  const modelNote = matchesLoaded
    ? 'same model as the one loaded'
    : `tuned with ${file.fileName} (SHA-256 ${file.sha256.slice(0, 12)}...), ${loaded === null ? 'no model is loaded' : 'not the loaded model'}${file.member === null ? '' : '; the bundle holds it'}`;
  return {
    gate: manifest.gate,
    calibrator: manifest.calibrator,
    modelSha256: hashes,
    verification: `bundle sound (format ${manifest.formatVersion}; ${checks.length} checks, ${members.size} members, hashes match); ${modelNote}; ${calibratorNote(manifest.calibrator)}`,
    bundleModel: { fileName: file.fileName, sha256: file.sha256, matchesLoaded, inBundle: file.member !== null },
  };
}

/** The import's words about the calibrator it restored. */
function calibratorNote(calibrator: CalibratorSpec | null): string {
  return calibrator === null ? 'no output calibrator' : `output calibrator: ${describeCalibrator(calibrator)}`;
}
