import { realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { CancelSignal } from '../../../src-shared/cancel-signal';
import { KnobError } from '../../../src-shared/errors';
import {
  branchFigures,
  knobHeadOutputs,
  VALIDATION_FRACTION,
  type HeadsData,
} from '../../../src-shared/heads/knob-heads';
import { headsCardMarkdown, type HeadsCard } from '../../../src-shared/heads/heads-card';
import type { InputSpec } from '../../../src-shared/frames/input-spec';
import { IMAGE_STATISTICS } from '../../../src-shared/heads/image-statistics';
import type { Trace } from '../../../src-shared/trace/trace';
import { labelledFrames } from '../../../src-shared/trace/trace-scores';
import { knobModelWithHeads } from '../deploy/knob-heads-graph';
import { checkOutputFile, writeOutputFiles } from '../files/output-files';
import { sha256Hex } from '../files/sha256';
import { hashUserFile, readUserFile } from '../files/user-files';
import { checkSpecAgainstModel, generatedLabelNames, readSidecar, sidecarPath } from '../inference/input-resolution';
import { graphInputMetadata, parseOnnxModel } from '../deploy/feature-tensor';
import { readTraceFile } from '../recording/trace-arrow';
import { storedProvenanceOf } from '../report/provenance';
import { fitKnobHeadsOnThreads } from './heads-threads';

/**
 * Knob heads fitted on a user's classifier (issue 31): the model with its features exposed (`knob
 * features`), and a recording it made with them over labelled images, clean and corrupted (a trace
 * file from `knob run --record-features`, or the run make-knob-model.ts does over a dataset). The
 * heads are fitted on a seeded 80 % of the labelled frames (src-shared/heads/knob-heads.ts) and the
 * card compares them on the other 20 % with the model as it recorded them (the single-classifier
 * adapter's branches and u*). The result is the Knob-native model (deploy/knob-heads-graph.ts),
 * which the app loads at once, and its card (src-shared/heads/heads-card.ts).
 */
export interface FitHeadsProgress {
  seed: number;
  signal?: CancelSignal;
  onProgress?: (stage: string, done: number, total: number) => void;
}

export interface FittedKnobModel {
  bytes: Uint8Array;
  card: HeadsCard;
}

/** Heads on a trace file that `modelPath` recorded with its features (`knob fit-heads --trace`). */
export async function fitHeadsOnTrace(
  request: { modelPath: string; tracePath: string } & FitHeadsProgress,
): Promise<FittedKnobModel> {
  const { modelPath, tracePath } = request;
  const source = await readUserFile(modelPath, 'model');
  const modelSha256 = sha256Hex(source);
  const traceHash = await hashUserFile(tracePath, 'trace');
  const file = await readTraceFile(tracePath);
  const provenance = storedProvenanceOf(file.context)?.model ?? null;
  if (provenance === null || !provenance.sha256.includes(modelSha256))
    throw new KnobError(
      'INVALID_INPUT',
      `${tracePath} was ${provenance === null ? 'not recorded with a known model' : `recorded with another model (SHA-256 ${provenance.sha256.join(' + ').slice(0, 12)}...)`}; record it with ${modelPath} (knob run --model ${modelPath} --record-features)`,
    );
  if (file.trace.features === undefined)
    throw new KnobError('INVALID_INPUT', `${tracePath} has no features: record it with knob run --record-features`);
  return fitHeadsOnRecording({
    ...request,
    model: { path: modelPath, sha256: modelSha256, bytes: source, contract: provenance.contract },
    // The class names the run used, which the trace records, and the input spec of the original's
    // sidecar, which is found beside the original only (the trace does not record the spec a run
    // was given): the model made keeps both.
    input: await sidecarInputSpec(modelPath, source),
    labels: recordedLabelNames(file.trace),
    // a trace the user recorded holds the model's features alone
    statisticsInFeatures: false,
    trace: file.trace,
    recording: { path: tracePath, sha256: traceHash.sha256, what: tracePath },
  });
}

/**
 * The input spec of `modelPath`'s sidecar (null where it gives none, or there is none), checked
 * against the model's input as loading it would, before the fit.
 */
async function sidecarInputSpec(modelPath: string, bytes: Uint8Array): Promise<InputSpec | null> {
  const spec = (await readSidecar(modelPath))?.input ?? null;
  if (spec !== null)
    checkSpecAgainstModel(
      spec,
      graphInputMetadata(parseOnnxModel(bytes, modelPath), modelPath),
      sidecarPath(modelPath),
    );
  return spec;
}

/** The class names a trace's run gave its classes, null where they were the generated ones. */
function recordedLabelNames(trace: Trace): string[] | null {
  const generated = generatedLabelNames(trace.classCount);
  return trace.labelNames.every((name, k) => name === generated[k]) ? null : trace.labelNames;
}

/**
 * Heads on a recording the model (its bytes, with the `features` output) made: `recording` names it
 * for the card (a trace file, or the dataset a run read), `contract` is how the model recorded it.
 */
export async function fitHeadsOnRecording(
  request: {
    /** The classifier's file and hash, and the bytes with its `features` output the heads are added to. */
    model: { path: string; sha256: string; bytes: Uint8Array; contract: string };
    /**
     * The input spec the model ran under and its class names, where known (null: the classifier's
     * own metadata, which the model made keeps): the model made keeps them as its own.
     */
    input: InputSpec | null;
    labels: readonly string[] | null;
    /**
     * Whether the recording's features end in the image statistics of its frames (the last
     * IMAGE_STATISTICS.length columns; image-statistics-graph.ts), computed under `input`, which the
     * new model computes them under too; false where the features are the backbone's alone.
     */
    statisticsInFeatures: boolean;
    trace: Trace;
    recording: { path: string; sha256: string; what: string };
  } & FitHeadsProgress,
): Promise<FittedKnobModel> {
  const { model, trace, recording } = request;
  const frames = labelledFrames(trace);
  const features = trace.features;
  if (features === undefined) throw new KnobError('INVALID_INPUT', `${recording.what} has no features`);
  if (request.statisticsInFeatures && request.input === null)
    throw new Error('image statistics in the features need the input spec they were computed under');
  const statisticsWidth = request.statisticsInFeatures ? IMAGE_STATISTICS.length : 0;
  const width = features.width - statisticsWidth;
  if (width < 1) throw new KnobError('INVALID_INPUT', `${recording.what} has no features beside the image statistics`);
  const k = trace.classCount;
  const severityColumn = trace.metadata.severity;
  if (severityColumn?.kind !== 'number')
    throw new KnobError(
      'INVALID_INPUT',
      `${recording.what} has no severity column: the heads need to know which frames are clean (record it with a corruption schedule)`,
    );
  const data: HeadsData = {
    // shared: the fit's threads read the features in place (heads-threads.ts)
    features: new Float32Array(new SharedArrayBuffer(frames.length * width * 4)),
    width,
    statistics: statisticsWidth === 0 ? null : new Float32Array(frames.length * statisticsWidth),
    labels: Int32Array.from(frames, (f) => trace.labels![f]!),
    severity: Float64Array.from(frames, (f) => severityColumn.values[f]!),
    classCount: k,
    recordedDynamic: new Float32Array(frames.length * k),
  };
  frames.forEach((f, i) => {
    const row = f * features.width;
    data.features.set(features.values.subarray(row, row + width), i * width);
    data.statistics?.set(features.values.subarray(row + width, row + features.width), i * statisticsWidth);
    data.recordedDynamic.set(trace.zDyn.subarray(f * k, (f + 1) * k), i * k);
  });
  const started = performance.now();
  const fit = await fitKnobHeadsOnThreads(data, {
    seed: request.seed,
    signal: request.signal,
    onProgress: request.onProgress,
  });
  const fitSeconds = (performance.now() - started) / 1000;
  const rows = fit.validation;
  /** The held-out frames' rows of one of the trace's [frames, k] branches. */
  const heldRows = (branch: Float32Array) =>
    Float64Array.from(
      { length: rows.length * k },
      (_, at) => branch[frames[rows[Math.floor(at / k)]!]! * k + (at % k)]!,
    );
  const recorded = {
    zStatic: heldRows(trace.zStatic),
    zDyn: heldRows(trace.zDyn),
    u: Float64Array.from(rows, (r) => trace.uRef[frames[r]!]!),
  };
  const labels = Int32Array.from(rows, (r) => data.labels[r]!);
  const severity = Float64Array.from(rows, (r) => data.severity[r]!);
  const card: HeadsCard = {
    model: { path: model.path, sha256: model.sha256 },
    trace: { path: recording.path, sha256: recording.sha256, labelledFrames: frames.length, featureWidth: width },
    seed: request.seed,
    split: `seeded random split (seed ${request.seed}): fitted on ${fit.train.length} labelled frames, ${Math.round(VALIDATION_FRACTION * 100)} % (${rows.length}) held out for this card`,
    steps: fit.steps,
    validation: {
      heads: branchFigures(knobHeadOutputs(fit.heads, data, rows), labels, severity, k),
      recorded: { ...branchFigures(recorded, labels, severity, k), contract: model.contract },
    },
    fitSeconds,
  };
  const bytes = knobModelWithHeads(model.bytes, model.path, fit.heads, {
    input: request.input,
    labels: request.labels,
    featuresLayer: `the classifier's penultimate activation (${model.path}), standardised into the fitted heads`,
    training: {
      method: 'knob fit-heads',
      trace: card.trace,
      model: card.model,
      seed: request.seed,
      split: card.split,
      steps: card.steps,
      validation: card.validation,
    },
  });
  return { bytes, card };
}

/**
 * The new model's path is an .onnx file that can be written, and not the classifier it is made
 * from (which it would replace); checked before any work.
 */
export async function checkKnobModelOutput(path: string, classifierPath: string): Promise<void> {
  if (!path.toLowerCase().endsWith('.onnx'))
    throw new KnobError('INVALID_INPUT', `${path}: a Knob model is written as an .onnx file`);
  const [out, source] = await Promise.all([path, classifierPath].map(resolvedPath));
  if (out === source)
    throw new KnobError(
      'INVALID_INPUT',
      `${path} is the classifier the Knob model is made from; name another file for the new model`,
    );
  await checkOutputFile(path);
}

/** The path with its links resolved where it exists (a new file's folder, else the path as given). */
async function resolvedPath(path: string): Promise<string> {
  const absolute = resolve(path);
  return realpath(absolute).catch(() =>
    realpath(dirname(absolute)).then(
      (folder) => join(folder, basename(absolute)),
      () => absolute,
    ),
  );
}

/**
 * NEW.onnx with its card beside it, NEW.card.json and NEW.card.md, written together (atomically);
 * a cancel while they are written leaves nothing replaced.
 */
export async function writeKnobModelFiles(path: string, made: FittedKnobModel, signal?: CancelSignal): Promise<void> {
  const stem = basename(path).replace(/\.onnx$/i, '');
  await writeOutputFiles(
    dirname(path),
    [
      { name: basename(path), data: made.bytes },
      { name: `${stem}.card.json`, data: `${JSON.stringify(made.card, null, 1)}\n` },
      { name: `${stem}.card.md`, data: headsCardMarkdown(made.card) },
    ],
    signal === undefined ? undefined : { signal, what: 'making the Knob model' },
  );
}
