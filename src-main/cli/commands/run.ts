import { checkCalibratorFor } from '../../../src-shared/calibrators';
import { KnobError } from '../../../src-shared/errors';
import { FRAME_RATE_RANGE_HZ } from '../../../src-shared/gate';
import { checkOutputFolder } from '../../core/files/output-files';
import { InferenceClient } from '../../core/inference/inference-client';
import { runSourceOffline } from '../../core/use-cases/run-offline';
import { batchFramesFor } from '../../core/inference/batch-size';
import { replayRun } from '../../core/use-cases/replay-run';
import type { OfflineRunResult } from '../../core/engine/offline-run';
import { checkKeptClassCount, KEPT_CLASSES_MAX_CLASS_COUNT } from '../../../src-shared/trace/kept-classes';
import { runProvenance } from '../../core/report/provenance';
import {
  GATE_OPTIONS,
  settingsFromArgs,
  checkSettingsForModel,
  MAX_BATCH,
  frameRateOption,
  positiveInteger,
  SCHEDULE_OPTIONS,
  scheduleFromArgs,
  seedOption,
  parseCommandArgs,
} from '../cli-args';
import { UsageError } from '../usage-error';
import {
  LABEL_OPTIONS,
  SOURCE_OPTIONS,
  describeSourceLines,
  importLabelsFromArgs,
  openSourceFromArgs,
} from '../source-args';
import { describeModel, MODEL_OPTIONS, modelOptionsFromArgs } from '../model-args';
import { commandCall } from '../command-call';
import { printRunSummary } from './run-summary';

/** knob run: model + source -> trace.arrow, metrics.json, report.html. */
export async function runCommand(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, {
    ...MODEL_OPTIONS,
    ...GATE_OPTIONS,
    ...SCHEDULE_OPTIONS,
    ...SOURCE_OPTIONS,
    ...LABEL_OPTIONS,
    out: { type: 'string' },
    'frame-rate': { type: 'string' },
    batch: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean', default: false },
    intervals: { type: 'boolean', default: false },
    'record-features': { type: 'boolean', default: false },
    keep: { type: 'string' },
  });
  if (!values.source) throw new UsageError('--source is required (default, a dataset, folder or video path)');
  if (!values.out) throw new UsageError('--out DIR is required');
  const { gate: settings, calibrator, settingsModel } = await settingsFromArgs(values);
  const modelOptions = modelOptionsFromArgs(values);
  const frameRateHz =
    values['frame-rate'] === undefined ? undefined : frameRateOption(values['frame-rate'], 'frame-rate', 30);
  // the batch: --batch, or chosen from the model's input size once it is loaded
  const batchGiven = values.batch === undefined ? undefined : positiveInteger(values.batch, 'batch', 1, MAX_BATCH);
  const limit = values.limit === undefined ? undefined : positiveInteger(values.limit, 'limit', 1);
  const keep = keptClassesFromArgs(values, calibrator !== null);
  // the schedule's options now, at the highest frame rate (the source's, known once it opens, is
  // checked below), and the output folder: neither waits for the model to start
  scheduleFromArgs(values, FRAME_RATE_RANGE_HZ.max);
  await checkOutputFolder(values.out);
  const client = await InferenceClient.start(modelOptions, {
    onRestart: (notice) => {
      if (!values.json)
        process.stderr.write(
          `knob: ${notice.reason}; restarting in ${notice.delayMs} ms (attempt ${notice.attempt})\n`,
        );
    },
  });
  try {
    const model = client.description;
    checkSettingsForModel(values, settingsModel, model);
    if (calibrator !== null) checkCalibratorFor(calibrator, model.classCount);
    if (keep !== undefined) checkKeptClassCount(keep, model.classCount);
    const batch = batchGiven === undefined ? batchFramesFor(model.input) : null;
    const batchSize = batchGiven ?? batch!.frames;
    if (!values.json)
      process.stderr.write(
        `${describeModel(model)}\nbatch: ${batch?.reason ?? `${batchSize} frames a batch (--batch)`}\n`,
      );
    const source = await openSourceFromArgs(values, model, frameRateHz);
    if (!values.json) process.stderr.write(describeSourceLines(source.info));
    const schedule = scheduleFromArgs(values, source.info.frameRateHz);
    const call = commandCall('run', values.json);
    const result = await runSourceOffline(
      {
        model: client,
        source,
        schedule,
        streamSeed: seedOption(values.seed),
        settings,
        batchSize,
        maxFrames: limit,
        recordFeatures: values['record-features'],
        keepClasses: keep,
      },
      call,
    ).finally(() => call.dispose());
    const provenance = runProvenance({
      model,
      source: source.info,
      schedule,
      seed: seedOption(values.seed),
      origin: 'offline run (knob run)',
    });
    if (result.framesProcessed === 0)
      throw new KnobError(result.error?.code ?? 'INVALID_INPUT', result.error?.message ?? 'no frames were processed');
    const summary = {
      intervals: values.intervals === true,
      settings,
      frames: result.framesProcessed,
      model,
      source: source.info,
      wallMs: result.wallMs,
      latency: result.latencyPerFrame,
      restarts: result.restarts,
      error: result.error,
    };
    const labelled = await importLabelsFromArgs(values, result.trace);
    if (labelled.entry !== null) provenance.labelImports.push(labelled.entry);
    const trace = labelled.trace;
    const partial =
      result.error === null
        ? null
        : {
            reason: result.error.message,
            framesProcessed: result.framesProcessed,
            framesExpected:
              limit === undefined || source.info.frameCount === null
                ? (limit ?? source.info.frameCount)
                : Math.min(limit, source.info.frameCount),
          };
    const { analysis, files } = await replayRun({
      folder: values.out,
      trace,
      settings,
      calibrator,
      provenance,
      partial,
    });
    printRunSummary(values.json === true, { ...summary, files, analysis });
    return endOfRun(result, values.out);
  } finally {
    await client.close();
  }
}

/** The exit status of a run whose outputs are written: 1, said on stderr, when it stopped part-way. */
function endOfRun(result: OfflineRunResult, folder: string): number {
  if (result.error === null) return 0;
  process.stderr.write(
    `knob: ${result.error.message} (kept the ${result.framesProcessed} frames processed before it in ${folder})\n`,
  );
  return 1;
}

/**
 * --keep N: classes kept a frame (a kept-class recording), checked before the model starts. A kept
 * trace has no full rows for a calibrator, and labels imported after the run would not be among a
 * frame's kept classes (its label is kept only when the source gives it).
 */
function keptClassesFromArgs(
  values: { keep?: string; 'label-file'?: string },
  calibrated: boolean,
): number | undefined {
  if (values.keep === undefined) return undefined;
  const keep = positiveInteger(values.keep, 'keep', 2, KEPT_CLASSES_MAX_CLASS_COUNT - 1);
  if (keep < 2) throw new UsageError(`--keep must be at least 2 classes a frame, got ${keep}`);
  if (values['label-file'] !== undefined)
    throw new UsageError(
      '--keep with --label-file: labels imported after the run would not be among the kept classes; record every class, import the labels, then knob compact',
    );
  if (calibrated)
    throw new UsageError('--keep with a calibrator: a kept-class trace has no full rows for it to calibrate');
  return keep;
}
