import { sha256Hex } from '../files/sha256';
import * as ort from 'onnxruntime-node';
import {
  DEFAULT_ADAPTER,
  type ExecutionProviderName,
  type ModelContract,
  type ModelDescription,
  type ModelOptions,
} from '../../../src-shared/api/model-options';
import { KnobError } from '../../../src-shared/errors';
import { tensorShape } from '../../../src-shared/frames/frame-to-tensor';
import {
  agreementGateTargetInto,
  certaintyGateTargetInto,
  temperedLogitsInto,
} from '../../../src-shared/fusion/gate-target';
import { readUserFile } from '../files/user-files';
import { BatchTensors } from './batch-tensors';
import { createSessionOnFirstProvider, type ProviderChoice } from './execution-providers';
import { readSidecar, resolveInputSpec, resolveLabels, checkSpecAgainstModel } from './input-resolution';
import { readOnnxMetadata, type OnnxMetadata } from './onnx-metadata';

/**
 * A model opened under one of the three contracts, turning 8-bit frames into the branch outputs a
 * Trace holds. Runs inside the inference process; timings are measured where the work happens.
 */
export interface BranchOutputs {
  zStatic: Float32Array;
  zDyn: Float32Array;
  uRef: Float32Array;
  /** [count, featureCount] from the model's `features` output when asked for and present, else null. */
  features: Float32Array | null;
  preprocessMs: number;
  inferenceMs: number;
}

export interface LoadedModel {
  description: ModelDescription;
  /**
   * Frames count x H x W x C at the input spec's size; `firstFrame` numbers them in errors.
   * `keepFeatures`: also return the optional `features` output (wide: only for recordings that ask).
   */
  run(frames: Uint8Array, count: number, firstFrame: number, keepFeatures?: boolean): Promise<BranchOutputs>;
  close(): Promise<void>;
}

/** The outputs of the Knob-native contract. */
export const KNOB_OUTPUTS: readonly string[] = ['z_static', 'z_dyn', 'u_ref'];
/** The optional output of the Knob-native contract: a feature vector per frame (its penultimate layer). */
export const FEATURES_OUTPUT = 'features';

/**
 * A single classifier's logits output: its only output, or the other one beside a `features`
 * output (a classifier whose penultimate activation `knob features` exposed); null otherwise.
 */
export function classifierLogitsOutput(outputs: readonly string[]): string | null {
  if (outputs.length === 1) return outputs[0]!;
  if (outputs.length === 2 && outputs.includes(FEATURES_OUTPUT)) return outputs.find((o) => o !== FEATURES_OUTPUT)!;
  return null;
}

function detectContract(options: ModelOptions, session: ort.InferenceSession): ModelContract {
  if (options.secondPath !== undefined) return 'two-classifiers';
  const outputs = session.outputNames;
  if (KNOB_OUTPUTS.every((name) => outputs.includes(name))) return 'knob-native';
  if (classifierLogitsOutput(outputs) !== null) return 'single-classifier';
  throw new KnobError(
    'INVALID_INPUT',
    `${options.path}: unexpected outputs (${outputs.join(', ')}); expected z_static, z_dyn, u_ref (Knob-native) or a single [N,K] logits output`,
  );
}

function float32Output(result: ort.InferenceSession.OnnxValueMapType, name: string, source: string): ort.Tensor {
  const tensor = result[name] as ort.Tensor | undefined;
  if (tensor === undefined) throw new KnobError('INVALID_INPUT', `${source}: output '${name}' missing from the result`);
  if (tensor.type !== 'float32')
    throw new KnobError('INVALID_INPUT', `${source}: output '${name}' is ${tensor.type}; float32 logits are expected`);
  return tensor;
}

/** [N,K] logits (or [N] / [N,1] when k is 1) with every value finite. */
function checkedRows(
  tensor: ort.Tensor,
  name: string,
  count: number,
  k: number | null,
  firstFrame: number,
  source: string,
): Float32Array {
  const dims = tensor.dims;
  const rows = dims[0];
  const width = dims.length === 1 ? 1 : dims.slice(1).reduce((a, b) => a * b, 1);
  if (rows !== count || (k !== null && width !== k) || (k === null && dims.length !== 2)) {
    throw new KnobError(
      'INVALID_INPUT',
      `${source}: output '${name}' has shape [${dims.join(', ')}] for a batch of ${count}; expected [${count}, ${k ?? 'K'}]`,
    );
  }
  const data = tensor.data as Float32Array;
  for (let i = 0; i < data.length; i++) {
    const value = data[i];
    if (!(value - value === 0)) {
      throw new KnobError(
        'INVALID_INPUT',
        `${source}: output '${name}' is ${value} at frame ${firstFrame + Math.floor(i / width)}`,
      );
    }
  }
  return data;
}

/** One model file: its metadata (a truncated or non-ONNX file fails here, by name) and a session. */
async function openSession(
  path: string,
  providers: ModelOptions['executionProviders'],
  intraOpThreads: number | undefined,
): Promise<{ metadata: OnnxMetadata; choice: ProviderChoice; sha256: string }> {
  const bytes = await readUserFile(path, 'model');
  const metadata = readOnnxMetadata(bytes, path);
  const sha256 = sha256Hex(bytes);
  return { metadata, sha256, choice: await createSessionOnFirstProvider(bytes, path, providers, intraOpThreads) };
}

/** `intraOpThreads`: onnxruntime's threads per session (default: its own choice, one per core). */
export async function loadModel(options: ModelOptions, intraOpThreads?: number): Promise<LoadedModel> {
  const sidecar = await readSidecar(options.path);
  const {
    metadata,
    choice: first,
    sha256,
  } = await openSession(options.path, options.executionProviders, intraOpThreads);
  const hashes = [sha256];
  const sessions: ort.InferenceSession[] = [first.session];
  try {
    const requested = options.contract !== 'auto' ? options.contract : sidecar?.contract;
    const contract = requested ?? detectContract(options, first.session);
    if (contract === 'two-classifiers' && options.secondPath === undefined)
      throw new KnobError('INVALID_INPUT', `${options.path}: the two-classifiers contract needs a second model file`);
    const input = resolveInputSpec(options, sidecar, metadata, first.session);
    let second: ort.InferenceSession | null = null;
    if (contract === 'two-classifiers') {
      // The second branch runs on the provider the first one got, so both branches share a device.
      const opened = await openSession(options.secondPath!, [first.provider], intraOpThreads);
      second = opened.choice.session;
      hashes.push(opened.sha256);
      sessions.push(second);
      if (second.inputMetadata.length !== 1)
        throw new KnobError(
          'INVALID_INPUT',
          `${options.secondPath}: the model has ${second.inputMetadata.length} inputs; one image input is expected`,
        );
      checkSpecAgainstModel(
        { ...input.spec, name: second.inputNames[0] },
        second.inputMetadata[0],
        options.secondPath!,
      );
    }
    const adapter =
      contract === 'single-classifier'
        ? {
            t0: options.t0 ?? sidecar?.t0 ?? DEFAULT_ADAPTER.t0,
            certaintyRule: options.certaintyRule ?? sidecar?.certaintyRule ?? DEFAULT_ADAPTER.certaintyRule,
          }
        : null;
    const spec = input.spec;
    const tensors = new BatchTensors(spec);
    let inferenceTurn: Promise<unknown> = Promise.resolve();
    let scratch = new Float64Array(0);
    let classCount: number | null = null;
    // a Knob-native model's features, or a single classifier's exposed by `knob features`
    const hasFeatures =
      (contract === 'knob-native' || contract === 'single-classifier') &&
      first.session.outputNames.includes(FEATURES_OUTPUT);
    let featureCount: number | null = null;

    // onnxruntime-node runs a session synchronously on the calling thread, so runs are taken in
    // arrival order, one at a time.
    const inferInTurn = async (
      data: Float32Array,
      count: number,
      firstFrame: number,
      keepFeatures: boolean,
    ): Promise<Omit<BranchOutputs, 'preprocessMs'>> => {
      const previous = inferenceTurn;
      let releaseTurn: () => void = () => undefined;
      inferenceTurn = new Promise<void>((resolve) => (releaseTurn = resolve));
      await previous;
      try {
        return await infer(data, tensorShape(spec, count), count, firstFrame, keepFeatures);
      } finally {
        releaseTurn();
      }
    };

    const run = async (
      frames: Uint8Array,
      count: number,
      firstFrame: number,
      keepFeatures = false,
    ): Promise<BranchOutputs> => {
      const started = performance.now();
      const data = tensors.prepare(frames, count);
      const preprocessMs = performance.now() - started;
      try {
        return { ...(await inferInTurn(data, count, firstFrame, keepFeatures)), preprocessMs };
      } finally {
        tensors.release(data);
      }
    };

    const infer = async (
      data: Float32Array,
      shape: number[],
      count: number,
      firstFrame: number,
      keepFeatures: boolean,
    ): Promise<Omit<BranchOutputs, 'preprocessMs'>> => {
      const preprocessed = performance.now();
      const feed = (session: ort.InferenceSession) => ({
        [session.inputNames[0]]: new ort.Tensor('float32', data, shape),
      });
      let zStatic: Float32Array;
      let zDyn: Float32Array;
      let uRef: Float32Array;
      let features: Float32Array | null = null;
      /** An output's [count, k] rows (k null: whatever the first run gives), checked. */
      const rowsOf = (
        result: ort.InferenceSession.OnnxValueMapType,
        name: string,
        k: number | null,
        source = options.path,
      ): Float32Array => checkedRows(float32Output(result, name, source), name, count, k, firstFrame, source);
      // [count, F] rows, F the same on every run
      const featuresOf = (result: ort.InferenceSession.OnnxValueMapType): Float32Array => {
        const rows = rowsOf(result, FEATURES_OUTPUT, featureCount);
        featureCount = rows.length / count;
        return rows;
      };
      if (contract === 'knob-native') {
        // the features output is fetched only when asked for: onnxruntime skips what is not requested
        const wanted = [...KNOB_OUTPUTS, ...(keepFeatures && hasFeatures ? [FEATURES_OUTPUT] : [])];
        const result = await first.session.run(feed(first.session), wanted);
        zStatic = rowsOf(result, 'z_static', classCount);
        const k = zStatic.length / count;
        zDyn = rowsOf(result, 'z_dyn', k);
        uRef = rowsOf(result, 'u_ref', 1);
        if (wanted.length > KNOB_OUTPUTS.length) features = featuresOf(result);
        classCount = k;
      } else {
        const outA = classifierLogitsOutput(first.session.outputNames) ?? first.session.outputNames[0]!;
        const withFeatures = keepFeatures && hasFeatures;
        const resultA = await first.session.run(feed(first.session), [
          outA,
          ...(withFeatures ? [FEATURES_OUTPUT] : []),
        ]);
        const a = rowsOf(resultA, outA, classCount);
        const k = a.length / count;
        classCount = k;
        if (withFeatures) features = featuresOf(resultA);
        if (scratch.length < 2 * k) scratch = new Float64Array(2 * k);
        uRef = new Float32Array(count);
        if (second === null) {
          zDyn = a;
          zStatic = new Float32Array(a.length);
          temperedLogitsInto(a, a.length, adapter!.t0, zStatic);
          certaintyGateTargetInto(a, count, k, adapter!.certaintyRule, uRef, scratch);
        } else {
          const outB = classifierLogitsOutput(second.outputNames) ?? second.outputNames[0]!;
          const b = rowsOf(await second.run(feed(second), [outB]), outB, k, options.secondPath!);
          zStatic = a;
          zDyn = b;
          agreementGateTargetInto(a, b, count, k, uRef, scratch);
        }
      }
      return { zStatic, zDyn, uRef, features, inferenceMs: performance.now() - preprocessed };
    };

    // One blank frame resolves K (and the feature width) and checks every output before any real frame is sent.
    const probe = await run(new Uint8Array(spec.width * spec.height * spec.channels), 1, 0, hasFeatures);
    const k = probe.zStatic.length;
    const labels = resolveLabels(options, sidecar, metadata, k);
    const provider: ExecutionProviderName = first.provider;
    const description: ModelDescription = {
      paths: options.secondPath === undefined ? [options.path] : [options.path, options.secondPath],
      sha256: hashes,
      contract,
      contractSource:
        options.contract !== 'auto' ? 'requested' : sidecar?.contract !== undefined ? 'sidecar' : 'detected',
      classCount: k,
      labelNames: labels.names,
      labelsSource: labels.source,
      input: spec,
      inputSource: input.source,
      adapter,
      executionProvider: provider,
      skippedProviders: first.skipped,
      featureCount,
      // one loaded model runs one batch at a time (inferInTurn); the inference process says how
      // many it runs at once once its sessions have loaded
      concurrentRuns: 1,
    };
    return {
      description,
      run,
      close: async () => {
        for (const session of sessions) await session.release();
      },
    };
  } catch (error) {
    for (const session of sessions) await session.release().catch(() => undefined);
    throw error;
  }
}
