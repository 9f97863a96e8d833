import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelOptions } from '../../../src-shared/api/model-options';
import { parseCorruptionSchedule } from '../../../src-shared/corruptions';
import { IMAGE_STATISTICS } from '../../../src-shared/heads/image-statistics';
import { KnobError } from '../../../src-shared/errors';
import { DEFAULT_GATE_SETTINGS } from '../../../src-shared/gate/gate-settings';
import type { CallContext } from '../calls/call-context';
import { hasFeaturesOutput } from '../deploy/feature-tensor';
import { sha256Hex } from '../files/sha256';
import { readUserFile } from '../files/user-files';
import { InferenceClient } from '../inference/inference-client';
import { readSidecar } from '../inference/input-resolution';
import { featureCache } from '../recording/feature-cache';
import type { FrameSource } from '../sources/frame-source';
import { modelLabelOptions, openSourcePath } from '../sources/open-source';
import { imageStatisticsApply, withImageStatisticsInFeatures } from '../deploy/image-statistics-graph';
import { exposeFeatures } from './expose-features';
import type { FeaturesFrom } from '../../../src-shared/api/knob-model-schemas';
import { fitHeadsOnRecording, type FittedKnobModel } from './fit-heads';
import { runSourceOffline } from './run-offline';

/**
 * The recording Knob heads are fitted on: each image gets one of the shipped model's training
 * corruptions (tools/train/train_knob.py's split; shot and speckle noise, defocus and zoom blur,
 * brightness and JPEG stay held out) at a severity drawn from 0 (clean) to 5, as `knob run
 * --schedule random --corruptions ... --hold 1` records it: a sixth of the images clean, in
 * proportion however few there are. Seed 0: the same dataset gives the same recording.
 */
export const HEADS_RECORDING_SCHEDULE = parseCorruptionSchedule({
  kind: 'random',
  corruptions: [
    'gaussian_noise',
    'impulse_noise',
    'gaussian_blur',
    'motion_blur',
    'contrast',
    'fog',
    'pixelate',
    'elastic_transform',
  ],
  holdFrames: 1,
  minSeverity: 0,
  maxSeverity: 5,
});
const STREAM_SEED = 0;
/** Changes when what a kept recording holds changes, so an older one is not read as a newer. */
const CACHE_FORMAT = 2;
/** The features of a dataset are held in memory (three times over at the peak): 1 GiB of them at most. */
export const FEATURE_BYTES_BUDGET = 2 ** 30;

/** The model and its card, and whether the features were recorded now or kept from an earlier make. */
export type MadeKnobModel = FittedKnobModel & { featuresFrom: FeaturesFrom };
/** The feature cache's folder in the app's data folder. */
export const FEATURE_CACHE_FOLDER = 'feature-cache';

/**
 * Fewer images fit a gate that barely tells clean from corrupted: on the foreign CNN of the tests
 * (Fashion-MNIST), 1,200 images gave a held-out AUROC of u* of 0.55 and mean u* 0.14 clean against
 * 0.13 corrupted; 2,000 gave 0.72 (0.48 against 0.34), 5,000 0.78 (0.73 against 0.51).
 */
export const MIN_DATA_IMAGES = 2000;

/**
 * Any classifier made a Knob model from a labelled dataset (issue 31; the desk's "Make a Knob
 * model" and `knob fit-heads --data`): its penultimate activation exposed as `features` (or the
 * model's own `features` output), the dataset run through it once under HEADS_RECORDING_SCHEDULE
 * with its features and the images' statistics recorded (image-statistics-graph.ts; class names
 * matched to the model's labels by name, on the inference process's threads) or that recording as kept from before (feature-cache.ts, keyed by the model's
 * and the data's hashes), then the heads fitted on it (fit-heads.ts). Progress is the call's
 * (the steps, the run's frames, the fit's stages); a cancel stops at the next batch or stage and
 * nothing is written: the caller writes the result (writeKnobModelFiles).
 */
export async function makeKnobModel(
  request: {
    model: ModelOptions;
    dataPath: string;
    featuresNode?: string;
    seed: number;
    /** Where recordings of features are kept for the next fit (feature-cache.ts); null: none kept. */
    cacheFolder: string | null;
  },
  call: CallContext,
): Promise<MadeKnobModel> {
  const { model, dataPath } = request;
  if (model.secondPath !== undefined)
    throw new KnobError(
      'INVALID_INPUT',
      `a Knob model is made from one classifier; ${model.path} and ${model.secondPath} are two (name one of them)`,
    );
  const what = 'making a Knob model';
  call.progress(`${what}: the features of ${model.path}`, 0, null);
  const original = await readUserFile(model.path, 'model');
  const withFeatures = hasFeaturesOutput(original, model.path);
  if (withFeatures && request.featuresNode !== undefined)
    throw new KnobError(
      'INVALID_INPUT',
      `${model.path} already has a 'features' output; a features node is only for a classifier without one`,
    );
  const originalSha256 = sha256Hex(original);
  const bytes = withFeatures ? original : (await exposeFeatures(model.path, request.featuresNode)).bytes;
  // The inference process opens a file: the model with its features, in a folder of its own, with
  // what the original's sidecar said (the sidecar is found beside the original only).
  const folder = await mkdtemp(join(tmpdir(), 'knob-make-'));
  try {
    const path = join(folder, 'with-features.onnx');
    await writeFile(path, bytes);
    const sidecar = await readSidecar(model.path);
    const startClient = (at: string, input: ModelOptions['input']) =>
      InferenceClient.start({
        ...model,
        path: at,
        input,
        labels: model.labels ?? sidecar?.labels,
        t0: model.t0 ?? sidecar?.t0,
        certaintyRule: model.certaintyRule ?? sidecar?.certaintyRule,
      });
    // the process running the model: this one, then (recording with the image statistics) the recorder's
    let client: InferenceClient | null = await startClient(path, model.input ?? sidecar?.input);
    try {
      const description = client.description;
      const statisticsInput = imageStatisticsApply(description.input) ? description.input : null;
      // recorded by the model with the image statistics after its features, under the input spec
      // just resolved (image-statistics-graph.ts); the model made keeps the backbone's features
      const recorderBytes =
        statisticsInput === null ? bytes : withImageStatisticsInFeatures(bytes, model.path, statisticsInput);
      const recordedWidth = (description.featureCount ?? 0) + (statisticsInput === null ? 0 : IMAGE_STATISTICS.length);
      const source = await openSourcePath(dataPath, {
        target: description.input,
        ...modelLabelOptions(description, null),
        signal: call.signal,
        onProgress: (done, total) => call.progress(`${what}: reading ${dataPath}`, done, total),
      });
      // the labels first (the images are decoded already): enough labelled images, and the
      // recording held in memory within its budget, before the model runs over them
      const labels = source.info.hasLabels ? await labelsOf(source) : null;
      const labelled = labels === null ? 0 : labels.filter((label) => label >= 0).length;
      if (labelled < MIN_DATA_IMAGES)
        throw new KnobError(
          'INVALID_INPUT',
          `${dataPath}: ${labels === null ? 'no labels' : `${labelled} labelled images`}; Knob heads are fitted on at least ${MIN_DATA_IMAGES.toLocaleString('en')} labelled images (an ImageFolder, a CSV manifest, .npz or IDX with labels)`,
        );
      const featureBytes = labels!.length * recordedWidth * Float32Array.BYTES_PER_ELEMENT;
      if (featureBytes > FEATURE_BYTES_BUDGET)
        throw new KnobError(
          'INVALID_INPUT',
          `${dataPath}: ${labels!.length} images of ${recordedWidth} features would hold ${(featureBytes / 2 ** 30).toFixed(1)} GiB of features (at most ${FEATURE_BYTES_BUDGET / 2 ** 30} GiB); the heads read at most 20,000 of them: give a subset of the images`,
        );
      const identity = source.info.identity;
      const dataSha256 = identity === null || identity.kind === 'camera' ? null : identity.sha256;
      const cache = request.cacheFolder === null || dataSha256 === null ? null : featureCache(request.cacheFolder);
      const key = {
        format: CACHE_FORMAT,
        // the model that records: its features, and the statistics' nodes where it gives them
        model: recorderBytes === original ? originalSha256 : sha256Hex(recorderBytes),
        contract: description.contract,
        adapter: description.adapter,
        data: dataSha256,
        input: description.input,
        // the columns after the features: the image statistics by name, or none
        statistics: statisticsInput === null ? null : IMAGE_STATISTICS,
        labels: description.labelNames,
        schedule: HEADS_RECORDING_SCHEDULE,
        streamSeed: STREAM_SEED,
      };
      let trace = cache === null ? null : await cache.read(key);
      // The data's identity hashes the labels files too (source-identity.ts); the labels are still
      // compared frame for frame, so a kept recording never brings labels the source lacks.
      if (trace !== null && !sameLabels(trace.labels ?? null, labels)) trace = null;
      // and a kept recording of another width (features and statistics) is recorded anew, never misread
      if (trace !== null && trace.features?.width !== recordedWidth) trace = null;
      const featuresFrom: FeaturesFrom = trace === null ? 'recorded' : 'cache';
      if (trace === null) {
        if (recorderBytes !== bytes) {
          // one copy of the model in memory at a time: this process ends before the recorder's starts
          await client.close();
          client = null;
          const recorderPath = join(folder, 'with-features-and-statistics.onnx');
          await writeFile(recorderPath, recorderBytes);
          client = await startClient(recorderPath, statisticsInput!);
        }
        const run = await runSourceOffline(
          {
            model: client,
            source,
            schedule: HEADS_RECORDING_SCHEDULE,
            streamSeed: STREAM_SEED,
            settings: DEFAULT_GATE_SETTINGS,
            recordFeatures: true,
          },
          call,
        );
        if (run.error !== null) throw new KnobError(run.error.code, run.error.message);
        trace = run.trace;
        // best effort: a full disk or a read-only data folder costs the next make a recording, not this one
        // (the write creates the cache's folder)
        if (cache !== null) await cache.keep(key, trace).catch(() => undefined);
      } else call.progress(`${what}: the features of ${dataPath} as recorded before (kept in the cache)`, 1, 1);
      const fitted = await fitHeadsOnRecording({
        model: { path: model.path, sha256: originalSha256, bytes, contract: description.contract },
        // as the model ran for the recording (explicit, sidecar or metadata; a spec guessed from its
        // input's shape only where the statistics undo it)
        input: statisticsInput !== null || description.inputSource !== 'input-shape' ? description.input : null,
        labels: description.labelsSource === 'generated' ? null : description.labelNames,
        statisticsInFeatures: statisticsInput !== null,
        trace,
        recording: {
          path: dataPath,
          sha256: dataSha256 ?? '',
          what: `the recording of ${dataPath}`,
        },
        seed: request.seed,
        signal: call.signal,
        onProgress: (stage, done, total) => call.progress(`${what}: fitting the ${stage}`, done, total),
      });
      return { ...fitted, featuresFrom };
    } finally {
      await client?.close();
    }
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** Every label the source gives, in order (its images are decoded already: a pass is cheap beside the model). */
async function labelsOf(source: FrameSource): Promise<Int32Array | null> {
  const labels: number[] = [];
  for await (const batch of source.batches(4096)) {
    if (batch.labels === null) return null;
    for (const label of batch.labels) labels.push(label);
  }
  return Int32Array.from(labels);
}

function sameLabels(a: Int32Array | null, b: Int32Array | null): boolean {
  return a !== null && b !== null && a.length === b.length && a.every((label, i) => label === b[i]);
}
