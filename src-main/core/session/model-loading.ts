import type { Knobs } from '../../../src-shared/api/contract';
import type { ModelDescription, ModelOptions } from '../../../src-shared/api/model-options';
import { calibratorClassCount, describeCalibrator } from '../../../src-shared/calibrators';
import { KnobError, type KnobErrorPayload } from '../../../src-shared/errors';
import { hashUserFile } from '../files/user-files';
import { InferenceClient } from '../inference/inference-client';
import type { InferenceLauncher } from '../inference/inference-launcher';
import type { Logger } from '../logging/logger';
import { DEFAULT_MODEL_PATH } from '../model-card/default-model';
import { describeModelHash, sameModel } from '../recording/model-binding';
import type { KnobStore } from './knob-store';

/**
 * The parts of model.load that are not the transition itself: the calibrator rule before anything
 * starts, the inference process, and what becomes of the calibrator once the model is in.
 */
export type CalibratorChoice = 'keep' | 'drop';

/** `default` names the shipped model. */
export function withDefaultModelPath(options: ModelOptions): ModelOptions {
  return options.path === 'default' ? { ...options, path: DEFAULT_MODEL_PATH } : options;
}

/**
 * Whether the output calibrator stays on after loading `options`: yes when there is none or it
 * belongs to that model (same SHA-256); otherwise only when the caller chose 'keep', and without a
 * choice the load is refused (CALIBRATOR_OF_ANOTHER_MODEL) before anything changes.
 */
export async function calibratorStays(
  options: ModelOptions,
  knobs: Knobs,
  choice: CalibratorChoice | undefined,
): Promise<boolean> {
  const { calibrator, calibratorModel } = knobs;
  if (calibrator === null || choice === 'keep') return true;
  if (choice === 'drop') return false;
  const paths = options.secondPath === undefined ? [options.path] : [options.path, options.secondPath];
  const hashes = await Promise.all(paths.map(async (path) => (await hashUserFile(path, 'model')).sha256));
  if (calibratorModel !== null && sameModel(calibratorModel, hashes)) return true;
  throw new KnobError(
    'CALIBRATOR_OF_ANOTHER_MODEL',
    `the output calibrator (${describeCalibrator(calibrator)}) was fitted on ${calibratorModel === null ? 'a model not recorded' : `another model (${describeModelHash(calibratorModel)})`}, not ${paths.join(' + ')} (${describeModelHash(hashes)}): keep it on the new model or drop it`,
  );
}

/** The inference process for `options`; a crash restarts it, reported in the background. */
export async function startModel(
  options: ModelOptions,
  launcher: InferenceLauncher | undefined,
  logger: Logger,
  reportBackground: (error: KnobErrorPayload) => void,
): Promise<InferenceClient> {
  const client = await InferenceClient.start(options, {
    ...(launcher === undefined ? {} : { launcher }),
    onRestart: (notice) => {
      logger.warn({ attempt: notice.attempt, delayMs: notice.delayMs }, notice.reason);
      reportBackground({ code: 'INFERENCE_CRASHED', message: `${notice.reason}; restarting in ${notice.delayMs} ms` });
    },
  });
  logger.info(
    {
      paths: client.description.paths,
      provider: client.description.executionProvider,
      skippedProviders: client.description.skippedProviders,
    },
    'model loaded',
  );
  return client;
}

/**
 * After the load: the calibrator goes unless it was kept, and a kept one fitted for another number
 * of classes goes all the same, said so (the state's notice and the log).
 */
export function settleCalibrator(
  knobs: KnobStore,
  model: ModelDescription,
  keep: boolean,
  reportBackground: (error: KnobErrorPayload) => void,
): void {
  const calibrator = knobs.current.calibrator;
  if (calibrator === null) return;
  const classes = calibratorClassCount(calibrator);
  const misfit = classes !== null && classes !== model.classCount;
  if (keep && !misfit) return;
  knobs.setCalibrator(null, { model, recording: null });
  if (keep)
    reportBackground({
      code: 'INVALID_SETTINGS',
      message: `the output calibrator (${describeCalibrator(calibrator)}) is for ${classes} classes and ${model.paths.join(' + ')} has ${model.classCount}: it was dropped, although keeping it was asked`,
    });
}
