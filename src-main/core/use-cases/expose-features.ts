import * as ort from 'onnxruntime-node';
import { KnobError } from '../../../src-shared/errors';
import {
  findFinalLayer,
  graphTensors,
  parseOnnxModel,
  withFeaturesOutput,
  type FinalLayer,
} from '../deploy/feature-tensor';
import { readUserFile } from '../files/user-files';
import { classifierLogitsOutput, FEATURES_OUTPUT } from '../inference/loaded-model';

/**
 * A classifier's penultimate activation made an output (issue 31; `knob features`): the graph
 * rewritten by deploy/feature-tensor.ts, then run once on a blank input in onnxruntime to prove
 * what it gives: a [1, F] float feature row, and (where the final layer's weights are constants)
 * that the layer maps it to the model's own logits, within FEATURE_CHECK_TOLERANCE. A tensor that
 * is not a feature vector, or not what the logits are computed from, is refused before anything is
 * written. The app then loads the model as a single classifier with features: recordings keep them,
 * and the feature calibrators and the feature drift signals take them.
 */
export const FEATURE_CHECK_TOLERANCE = 1e-4;

export interface ExposedFeatures {
  bytes: Uint8Array;
  /** The tensor given as `features`, and how it was found (null where the caller named it). */
  tensor: string;
  layer: FinalLayer | null;
  width: number;
  /** The largest |W f + b - logits| on the blank input, relative to 1 + |logits|; null without a constant head. */
  headDifference: number | null;
}

/** What `--list` shows: the logits output, the final layer found (or why not), every tensor. */
export async function describeFeatureTensors(modelPath: string) {
  const model = parseOnnxModel(await readUserFile(modelPath, 'model'), modelPath);
  let layer: FinalLayer | null = null;
  let refused: string | null = null;
  try {
    layer = findFinalLayer(model, modelPath);
  } catch (error) {
    if (!(error instanceof KnobError)) throw error;
    refused = error.message;
  }
  return { layer, refused, tensors: graphTensors(model.graph!) };
}

export async function exposeFeatures(modelPath: string, tensor?: string): Promise<ExposedFeatures> {
  const source = await readUserFile(modelPath, 'model');
  const exposed = withFeaturesOutput(source, modelPath, tensor);
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(exposed.bytes);
  } catch (error) {
    throw new KnobError(
      'INVALID_INPUT',
      `${modelPath} with '${exposed.features}' as an output does not load in onnxruntime (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  try {
    const logitsName = classifierLogitsOutput(session.outputNames)!;
    const input = session.inputMetadata[0];
    if (session.inputNames.length !== 1 || input === undefined || !input.isTensor)
      throw new KnobError('INVALID_INPUT', `${modelPath}: one image input is expected`);
    // one blank row: the batch dimension 1, any other named dimension refused (the check needs a shape)
    const shape = input.shape.map((d, i) => (typeof d === 'number' && d > 0 ? d : i === 0 ? 1 : Number.NaN));
    if (shape.some(Number.isNaN))
      throw new KnobError(
        'INVALID_INPUT',
        `${modelPath}: its input ${session.inputNames[0]} has named dimensions beyond the batch (${input.shape.join(', ')}); the check needs a fixed image size`,
      );
    const blank = new ort.Tensor('float32', new Float32Array(shape.reduce((a, b) => a * b, 1)), shape);
    const result = await session.run({ [session.inputNames[0]!]: blank });
    const features = result[FEATURES_OUTPUT]!;
    const logits = result[logitsName]!;
    if (features.type !== 'float32' || features.dims.length !== 2 || features.dims[0] !== 1)
      throw new KnobError(
        'INVALID_INPUT',
        `${modelPath}: '${exposed.features}' is ${features.type} [${features.dims.join(', ')}] for one image; a [1, F] float feature row is expected (name another tensor)`,
      );
    const width = features.dims[1]!;
    const head = exposed.layer?.head ?? null;
    let headDifference: number | null = null;
    if (head !== null) {
      const f = features.data as Float32Array;
      const z = logits.data as Float32Array;
      if (head.width !== width || z.length !== head.classCount)
        throw new KnobError(
          'INVALID_INPUT',
          `${modelPath}: the final layer maps ${head.width} features to ${head.classCount} classes; '${exposed.features}' has ${width} and the logits ${z.length}`,
        );
      headDifference = 0;
      for (let k = 0; k < head.classCount; k++) {
        let value = head.bias[k]!;
        for (let j = 0; j < width; j++) value += head.weights[k * width + j]! * f[j]!;
        headDifference = Math.max(headDifference, Math.abs(value - z[k]!) / (1 + Math.abs(z[k]!)));
      }
      // NaN (a model that gives NaN on a blank image) fails too
      if (!(headDifference <= FEATURE_CHECK_TOLERANCE))
        throw new KnobError(
          'INVALID_INPUT',
          `${modelPath}: the final layer's weights do not map '${exposed.features}' to the logits (off by ${headDifference.toExponential(2)} on a blank image); name the features tensor yourself`,
        );
    }
    return { bytes: exposed.bytes, tensor: exposed.features, layer: exposed.layer, width, headDifference };
  } finally {
    await session.release();
  }
}
