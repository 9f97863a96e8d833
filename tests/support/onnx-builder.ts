import { create, toBinary } from '@bufbuild/protobuf';
import { AttributeProto_AttributeType, ModelProtoSchema, TensorProto_DataType } from 'onnx-buf';
import { valueInfo } from '../../src-main/core/deploy/graph-builder';

/** The input of linearClassifier's models: 28 x 28 grey pixels scaled to [0, 1]. */
export const GREY_28X28_INPUT = {
  name: 'x',
  layout: 'NCHW' as const,
  width: 28,
  height: 28,
  channels: 1 as const,
  value_range: [0, 1] as [number, number],
  mean: [0],
  std: [1],
};

/**
 * Small real ONNX models for the tests, encoded against ONNX's own schema (onnx-buf, the app's
 * ONNX schema package). onnxruntime-node runs them like any exported model.
 */
export interface ValueSpec {
  name: string;
  shape: Array<number | string>;
}

export interface NodeSpec {
  op: string;
  inputs: string[];
  outputs: string[];
  attributes?: Record<string, number | number[]>;
}

export interface InitializerSpec {
  name: string;
  dims: number[];
  values: Float32Array | BigInt64Array;
}

export interface ModelSpec {
  inputs: ValueSpec[];
  outputs: ValueSpec[];
  nodes: NodeSpec[];
  initializers?: InitializerSpec[];
  metadata?: Record<string, string>;
  opset?: number;
}

export function buildOnnxModel(spec: ModelSpec): Uint8Array {
  const message = create(ModelProtoSchema, {
    irVersion: 8n,
    producerName: 'knob-studio-tests',
    opsetImport: [{ domain: '', version: BigInt(spec.opset ?? 13) }],
    graph: {
      name: 'test',
      node: spec.nodes.map((n, i) => ({
        name: `${n.op}_${i}`,
        opType: n.op,
        input: n.inputs,
        output: n.outputs,
        attribute: Object.entries(n.attributes ?? {}).map(([name, value]) =>
          Array.isArray(value)
            ? { name, type: AttributeProto_AttributeType.INTS, ints: value.map(BigInt) }
            : { name, type: AttributeProto_AttributeType.INT, i: BigInt(value) },
        ),
      })),
      initializer: (spec.initializers ?? []).map((init) => ({
        name: init.name,
        dims: init.dims.map(BigInt),
        dataType: init.values instanceof Float32Array ? TensorProto_DataType.FLOAT : TensorProto_DataType.INT64,
        rawData: Uint8Array.from(new Uint8Array(init.values.buffer, init.values.byteOffset, init.values.byteLength)),
      })),
      input: spec.inputs.map((v) => valueInfo(v.name, 'float', v.shape)),
      output: spec.outputs.map((v) => valueInfo(v.name, 'float', v.shape)),
    },
    metadataProps: Object.entries(spec.metadata ?? {}).map(([key, value]) => ({ key, value })),
  });
  return toBinary(ModelProtoSchema, message);
}

/**
 * A linear classifier on 28 x 28 grey images, logits = flatten(x) W + b, as ONNX with a dynamic
 * batch axis. `extra` nodes may post-process 'linear' into the final output.
 */
export function linearClassifier(options: {
  weights: Float32Array;
  bias: Float32Array;
  inputName?: string;
  outputName?: string;
  inputShape?: Array<number | string>;
  metadata?: Record<string, string>;
}): Uint8Array {
  const k = options.bias.length;
  const input = options.inputName ?? 'x';
  return buildOnnxModel({
    inputs: [{ name: input, shape: options.inputShape ?? ['N', 1, 28, 28] }],
    outputs: [{ name: options.outputName ?? 'logits', shape: ['N', k] }],
    nodes: [
      { op: 'Flatten', inputs: [input], outputs: ['flat'], attributes: { axis: 1 } },
      { op: 'MatMul', inputs: ['flat', 'W'], outputs: ['product'] },
      { op: 'Add', inputs: ['product', 'b'], outputs: [options.outputName ?? 'logits'] },
    ],
    initializers: [
      { name: 'W', dims: [784, k], values: options.weights },
      { name: 'b', dims: [k], values: options.bias },
    ],
    metadata: options.metadata,
  });
}

/**
 * Nearest-class-mean weights from labelled 28 x 28 images (pixels scaled to [0, 1]):
 * logit_k = x . m_k - |m_k|^2 / 2, times `scale`. A real, if weak, classifier of the images.
 */
export function classMeanWeights(
  images: Uint8Array[],
  labels: number[],
  classCount: number,
  scale: number,
): { weights: Float32Array; bias: Float32Array } {
  const sums = new Float64Array(784 * classCount);
  const counts = new Float64Array(classCount);
  images.forEach((image, i) => {
    counts[labels[i]]++;
    for (let p = 0; p < 784; p++) sums[p * classCount + labels[i]] += image[p] / 255;
  });
  const weights = new Float32Array(784 * classCount);
  const bias = new Float32Array(classCount);
  for (let k = 0; k < classCount; k++) {
    let norm = 0;
    for (let p = 0; p < 784; p++) {
      const mean = sums[p * classCount + k] / Math.max(1, counts[k]);
      weights[p * classCount + k] = mean * scale;
      norm += mean * mean;
    }
    bias[k] = (-norm / 2) * scale;
  }
  return { weights, bias };
}

/** Reference logits of linearClassifier for one image, in float64 (for checking the engine). */
export function linearLogits(image: Uint8Array, weights: Float32Array, bias: Float32Array): Float64Array {
  const k = bias.length;
  const out = new Float64Array(k);
  for (let c = 0; c < k; c++) {
    let sum = bias[c];
    for (let p = 0; p < 784; p++) sum += (image[p] / 255) * weights[p * k + c];
    out[c] = sum;
  }
  return out;
}
