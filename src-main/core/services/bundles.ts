import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiResult } from '../../../src-shared/api/contract';
import type { ModelDescription } from '../../../src-shared/api/model-options';
import type { CalibratorSpec } from '../../../src-shared/calibrators';
import { KnobError } from '../../../src-shared/errors';
import { bundleModelOptions, readVerifiedBundle } from '../bundle/bundle-verify';
import { writeOutputFile } from '../files/output-files';
import { sha256Hex } from '../files/sha256';
import { readUserFile } from '../files/user-files';
import type { CalibratorChoice } from '../session/model-loading';
import type { Session } from '../session/session';
import type { CallContext } from '../calls/call-context';
import { calibratorTargetOf, modelOf } from '../session/session-states';
import { exportBundle } from '../use-cases/export-bundle';
import { importKnobs } from '../use-cases/import-knobs';
import { stepsOfCall } from '../calls/work-steps';
import { stopIfCancelled } from '../../../src-shared/cancel-signal';
import { basename } from 'node:path';

/**
 * Bundles and settings files as the desk uses them: the current recording exported at the current
 * knobs (export-bundle.ts, the same use case as `knob export`), knobs and calibrator imported from
 * a bundle or a settings file, and the model a bundle was tuned with loaded under its contract.
 */
export class Bundles {
  /** `dataFolder`: where a bundle's own model copy is written (beside the recent runs), or null for tmp. */
  constructor(
    private readonly session: Session,
    private readonly dataFolder: string | null,
  ) {}

  /** The tuned-calibrator bundle of the current recording at the current knobs and calibrator. */
  async export(path: string, includeModel: boolean, call?: CallContext): Promise<ApiResult<'bundle.export'>> {
    const recording = this.session.requireRecording();
    const model = this.session.requireModel().description;
    const { gate, calibrator } = this.session.knobs.current;
    const { trace } = recording.copy();
    const traceName = recording.path ?? recording.description;
    const input = { path, trace, traceName, provenance: recording.provenance, model, gate, calibrator, includeModel };
    const exported = await exportBundle(input, stepsOfCall(call));
    const { deploy } = exported.manifest;
    return {
      path: exported.path,
      bytes: exported.bytes,
      members: exported.members,
      deploy:
        deploy.stepGraph === null ? (deploy.stepGraphNote ?? 'no step graph') : 'step graph and Triton repository',
    };
  }

  /** Knobs and calibrator from a bundle, or from a knob-settings file or export folder (import-knobs.ts). */
  async import(path: string, call?: CallContext): Promise<ApiResult<'bundle.import'>> {
    const imported = await importKnobs(path, modelOf(this.session.current)?.description ?? null, stepsOfCall(call));
    // a cancel that arrived during the verification: the knobs stay as they were
    stopIfCancelled(call?.signal, `the import of ${basename(path)} was cancelled`);
    const knobs = this.apply(imported.gate, imported.calibrator, imported.modelSha256 ?? undefined);
    return { knobs, verification: imported.verification, model: imported.bundleModel };
  }

  private apply(
    gate: Parameters<Session['knobs']['applyImported']>[0],
    calibrator: CalibratorSpec | null,
    fittedOn?: string[],
  ) {
    return this.session.knobs.applyImported(gate, calibrator, calibratorTargetOf(this.session.current), fittedOn);
  }

  /**
   * The model a bundle was tuned with, loaded under the bundle's contract, input spec and labels:
   * the bundle's own copy (written once into the app's data folder, named by its SHA-256), or a
   * file the user located, refused unless its SHA-256 is the bundle's.
   */
  async loadModel(
    path: string,
    modelPath: string | undefined,
    discard: boolean,
    choice?: CalibratorChoice,
  ): Promise<ModelDescription> {
    const { manifest, members } = await readVerifiedBundle(await readUserFile(path, 'bundle'), path);
    const { files } = manifest.model;
    const paths: string[] = [];
    if (modelPath !== undefined) {
      if (files.length > 1)
        throw new KnobError('INVALID_INPUT', `${path}: the bundle's two classifiers load from the bundle only`);
      if (sha256Hex(await readUserFile(modelPath, 'model')) !== files[0]!.sha256)
        throw new KnobError(
          'INVALID_INPUT',
          `${modelPath}: not the model the bundle was tuned with (SHA-256 differs from ${files[0]!.fileName}'s)`,
        );
      paths.push(modelPath);
    } else {
      for (const file of files) {
        if (file.member === null)
          throw new KnobError(
            'INVALID_INPUT',
            `${path}: the model is not in the bundle; locate ${file.fileName} (SHA-256 ${file.sha256.slice(0, 12)}...)`,
          );
        paths.push(await this.modelCopy(file.sha256, members.get(file.member)!));
      }
    }
    return this.session.loadModel(bundleModelOptions(manifest, paths), discard, choice);
  }

  /** A bundle's model as a file in the data folder, named by its hash. */
  private async modelCopy(hash: string, bytes: Uint8Array): Promise<string> {
    const folder = join(this.dataFolder ?? tmpdir(), 'bundle-models');
    await mkdir(folder, { recursive: true });
    const path = join(folder, `${hash}.onnx`);
    try {
      if (sha256Hex(await readUserFile(path, 'model')) === hash) return path;
    } catch {
      // not there yet (or unreadable): written below
    }
    return writeOutputFile(path, bytes);
  }
}
