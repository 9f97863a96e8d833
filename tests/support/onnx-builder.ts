import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';

/**
 * Small real ONNX models for the tests, encoded with protobufjs against the official onnx.proto the
 * app ships (resources/onnx). onnxruntime-node runs them like any exported model.
 */
const root = protobuf.parse(readFileSync('resources/onnx/onnx.proto', 'utf8'), { keepCase: true }).root;
const ModelProto = root.lookupType('onnx.ModelProto');
const FLOAT = 1;
const INT64 = 7;
const ATTRIBUTE_INT = 2;
const ATTRIBUTE_INTS = 7;

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

function valueInfo(spec: ValueSpec) {
  return {
    name: spec.name,
    type: {
      tensor_type: {
        elem_type: FLOAT,
        shape: { dim: spec.shape.map((d) => (typeof d === 'number' ? { dim_value: d } : { dim_param: d })) },
      },
    },
  };
}

export function buildOnnxModel(spec: ModelSpec): Uint8Array {
  const message = ModelProto.fromObject({
    ir_version: 8,
    producer_name: 'knob-studio-tests',
    opset_import: [{ domain: '', version: spec.opset ?? 13 }],
    graph: {
      name: 'test',
      node: spec.nodes.map((n, i) => ({
        name: `${n.op}_${i}`,
        op_type: n.op,
        input: n.inputs,
        output: n.outputs,
        attribute: Object.entries(n.attributes ?? {}).map(([name, value]) =>
          Array.isArray(value) ? { name, type: ATTRIBUTE_INTS, ints: value } : { name, type: ATTRIBUTE_INT, i: value },
        ),
      })),
      initializer: (spec.initializers ?? []).map((init) => ({
        name: init.name,
        dims: init.dims,
        data_type: init.values instanceof Float32Array ? FLOAT : INT64,
        raw_data: new Uint8Array(init.values.buffer, init.values.byteOffset, init.values.byteLength),
      })),
      input: spec.inputs.map(valueInfo),
      output: spec.outputs.map(valueInfo),
    },
    metadata_props: Object.entries(spec.metadata ?? {}).map(([key, value]) => ({ key, value })),
  });
  return ModelProto.encode(message).finish();
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
