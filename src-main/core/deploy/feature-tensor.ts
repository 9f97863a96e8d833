import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  AttributeProto_AttributeType,
  ModelProtoSchema,
  NodeProtoSchema,
  TensorProto_DataType,
  type GraphProto,
  type ModelProto,
  type NodeProto,
  type TensorProto,
  type ValueInfoProto,
} from 'onnx-buf';
import type * as ort from 'onnxruntime-node';
import { KnobError } from '../../../src-shared/errors';
import { classifierLogitsOutput, FEATURES_OUTPUT } from '../inference/loaded-model';
import { valueInfo } from './graph-builder';

/**
 * The penultimate activation of an ONNX classifier (issue 31): the tensor its final linear layer
 * reads, found by walking back from the logits output through the layer that makes them (Gemm, or
 * MatMul followed by Add of a constant, with Identity nodes passed through), and the graph rewritten
 * to give it as a second output named `features`, the model otherwise unchanged. Where no such layer
 * makes the logits (a 1x1 convolution head, a custom block), the caller names the tensor; every
 * node output is listed for that, with its operator and, where the graph declares it, its shape.
 */
export interface FinalLayer {
  /** The output the logits come from ('logits' where the model has one, else its only output). */
  logits: string;
  /** The tensor the final layer reads. */
  features: string;
  /** How it was found, in words. */
  found: string;
  /** The final layer's weights [K, F] row-major and bias [K] where they are constants of the graph, else null. */
  head: { weights: Float32Array; bias: Float32Array; classCount: number; width: number } | null;
}

/** Whether the model already gives a `features` output (a Knob-native model's, or one `knob features` wrote). */
export function hasFeaturesOutput(bytes: Uint8Array, what: string): boolean {
  return parseOnnxModel(bytes, what).graph!.output.some((o) => o.name === FEATURES_OUTPUT);
}

export function parseOnnxModel(bytes: Uint8Array, what: string): ModelProto {
  let model: ModelProto;
  try {
    model = fromBinary(ModelProtoSchema, bytes);
  } catch (error) {
    throw new KnobError(
      'INVALID_INPUT',
      `${what} is not an ONNX model (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  if (model.graph === undefined) throw new KnobError('INVALID_INPUT', `${what} has no graph`);
  return model;
}

/** The version of the standard ONNX operator set the model imports; null where it imports none. */
export function standardOpsetOf(model: ModelProto): number | null {
  const standard = model.opsetImport.find((o) => o.domain === '' || o.domain === 'ai.onnx');
  return standard === undefined ? null : Number(standard.version);
}

/** The classifier's logits output: the one named `logits`, or the only one (beside `features`). */
export function logitsOutputOf(graph: GraphProto, what: string): string {
  const names = graph.output.map((o) => o.name).filter((name) => name !== FEATURES_OUTPUT);
  if (names.includes('logits')) return 'logits';
  if (names.length === 1) return names[0]!;
  throw new KnobError(
    'INVALID_INPUT',
    `${what} has ${names.length} outputs (${names.join(', ')}) and none named 'logits'; which one is the classifier's?`,
  );
}

/** Every node output of the graph, in graph order: its producing operator and declared shape. */
export function graphTensors(graph: GraphProto): Array<{ name: string; op: string; shape: string | null }> {
  const declared = new Map(
    [...graph.valueInfo, ...graph.output].map((v) => {
      const type = v.type?.value;
      const dims = type?.case === 'tensorType' ? type.value.shape?.dim : undefined;
      const shape =
        dims === undefined
          ? null
          : `[${dims.map((d) => (d.value.case === 'dimValue' ? String(d.value.value) : (d.value.value ?? '?'))).join(', ')}]`;
      return [v.name, shape] as const;
    }),
  );
  return graph.node.flatMap((node) =>
    node.output.filter((o) => o !== '').map((name) => ({ name, op: node.opType, shape: declared.get(name) ?? null })),
  );
}

export function findFinalLayer(model: ModelProto, what: string): FinalLayer {
  const graph = model.graph!;
  const logits = logitsOutputOf(graph, what);
  const producer = new Map<string, NodeProto>();
  for (const node of graph.node) for (const output of node.output) producer.set(output, node);
  const constants = new Map(graph.initializer.map((t) => [t.name, t]));
  let tensor = logits;
  let node = producer.get(tensor);
  while (node?.opType === 'Identity') node = producer.get((tensor = node.input[0]!));
  const refuse = (why: string): never => {
    throw new KnobError(
      'INVALID_INPUT',
      `${what}: ${why}; name the features tensor yourself (knob features --list shows the graph's tensors)`,
    );
  };
  if (node === undefined) return refuse(`its output '${logits}' is not made by a node`);
  if (node.opType === 'Gemm') {
    const [a, b, c] = node.input;
    if (intAttribute(node, 'transA', 0) !== 0) refuse(`the Gemm making '${logits}' transposes its input`);
    const weights = constants.get(b!);
    const bias = c === undefined || c === '' ? null : constants.get(c);
    const head =
      weights === undefined || (bias === undefined && c !== undefined && c !== '')
        ? null
        : gemmHead(node, weights, bias ?? null);
    return { logits, features: a!, found: `the Gemm node '${node.name || node.output[0]}' makes '${logits}'`, head };
  }
  let matMul = node;
  let bias: TensorProto | null = null;
  if (node.opType === 'Add') {
    const [x, y] = node.input;
    const [product, constant] = constants.has(y!) ? [x!, y!] : constants.has(x!) ? [y!, x!] : [null, null];
    const made = product === null ? undefined : producer.get(product);
    if (made?.opType !== 'MatMul') return refuse(`'${logits}' is made by an Add that does not follow a MatMul`);
    matMul = made;
    bias = constants.get(constant!)!;
  }
  if (matMul.opType !== 'MatMul')
    return refuse(`'${logits}' is made by a ${matMul.opType} node, not a Gemm or MatMul (+ Add) layer`);
  const weights = constants.get(matMul.input[1]!);
  return {
    logits,
    features: matMul.input[0]!,
    found: `the MatMul node '${matMul.name || matMul.output[0]}'${bias === null ? '' : ' and its Add'} make '${logits}'`,
    head: weights === undefined ? null : matMulHead(weights, bias),
  };
}

/**
 * The model with `features` (the final layer's input, or the tensor named) as an added output named
 * `features`, and what it found. The graph is otherwise unchanged, at its opset.
 */
export function withFeaturesOutput(
  bytes: Uint8Array,
  what: string,
  tensor?: string,
): { bytes: Uint8Array; layer: FinalLayer | null; features: string } {
  const model = parseOnnxModel(bytes, what);
  const graph = model.graph!;
  if (graph.output.some((o) => o.name === FEATURES_OUTPUT))
    throw new KnobError('INVALID_INPUT', `${what} already has an output named '${FEATURES_OUTPUT}'`);
  const layer = tensor === undefined ? findFinalLayer(model, what) : null;
  const features = tensor ?? layer!.features;
  const known = new Set([...graph.input.map((i) => i.name), ...graph.node.flatMap((n) => n.output)]);
  if (!known.has(features))
    throw new KnobError('INVALID_INPUT', `${what} has no tensor named '${features}' (knob features --list shows them)`);
  if (features !== FEATURES_OUTPUT) {
    if (known.has(FEATURES_OUTPUT) || graph.initializer.some((t) => t.name === FEATURES_OUTPUT))
      throw new KnobError('INVALID_INPUT', `${what} already has a tensor named '${FEATURES_OUTPUT}'`);
    graph.node.push(create(NodeProtoSchema, { opType: 'Identity', input: [features], output: [FEATURES_OUTPUT] }));
  }
  graph.output.push(valueInfo(FEATURES_OUTPUT, 'float', ['N', layer?.head?.width ?? 'F']));
  const outputs = graph.output.map((o) => o.name);
  if (classifierLogitsOutput(outputs) === null)
    throw new KnobError(
      'INVALID_INPUT',
      `${what} would give ${outputs.join(', ')}: the app reads a classifier as one logits output beside '${FEATURES_OUTPUT}' (remove its other outputs first)`,
    );
  return { bytes: toBinary(ModelProtoSchema, model), layer, features };
}

function intAttribute(node: NodeProto, name: string, fallback: number): number {
  const found = node.attribute.find((a) => a.name === name);
  return found === undefined ? fallback : Number(found.i);
}

function floatAttribute(node: NodeProto, name: string, fallback: number): number {
  const found = node.attribute.find((a) => a.name === name && a.type === AttributeProto_AttributeType.FLOAT);
  return found === undefined ? fallback : found.f;
}

/** The most values a final layer's constant may hold here (a 65,536-class head of 2,048 features). */
const MAX_HEAD_VALUES = 1 << 27;

/**
 * A float32 constant's values (raw little-endian bytes or float_data), or null for another type,
 * for values that are not as many as its dims say, or for more than MAX_HEAD_VALUES.
 */
function floatValues(t: TensorProto): Float32Array | null {
  if (t.dataType !== TensorProto_DataType.FLOAT) return null;
  const declared = t.dims.reduce((product, d) => product * Number(d), 1);
  if (!Number.isSafeInteger(declared) || declared < 0 || declared > MAX_HEAD_VALUES) return null;
  if (t.rawData.length > 0) {
    if (t.rawData.length !== declared * 4) return null;
    // a copy: the parsed bytes may be a view at any offset of the file's buffer
    const copy = new Uint8Array(t.rawData);
    return new Float32Array(copy.buffer, 0, declared);
  }
  return t.floatData.length === declared ? Float32Array.from(t.floatData) : null;
}

/** Gemm: Y = alpha A B' + beta C, B' = B^T when transB; the weights [K, F] and bias [K]. */
function gemmHead(node: NodeProto, b: TensorProto, c: TensorProto | null): FinalLayer['head'] {
  const values = floatValues(b);
  if (values === null || b.dims.length !== 2) return null;
  const transB = intAttribute(node, 'transB', 0) === 1;
  const alpha = floatAttribute(node, 'alpha', 1);
  const beta = floatAttribute(node, 'beta', 1);
  const [rows, columns] = b.dims.map(Number) as [number, number];
  const [k, f] = transB ? [rows, columns] : [columns, rows];
  const weights = new Float32Array(k * f);
  for (let r = 0; r < k; r++)
    for (let j = 0; j < f; j++)
      weights[r * f + j] = alpha * (transB ? values[r * columns + j]! : values[j * columns + r]!);
  const bias = biasOf(c, k, beta);
  return bias === null ? null : { weights, bias, classCount: k, width: f };
}

/** MatMul(X, W) (+ c): W is [F, K]; the weights [K, F] and bias [K]. */
function matMulHead(w: TensorProto, c: TensorProto | null): FinalLayer['head'] {
  const values = floatValues(w);
  if (values === null || w.dims.length !== 2) return null;
  const [f, k] = w.dims.map(Number) as [number, number];
  const weights = new Float32Array(k * f);
  for (let r = 0; r < k; r++) for (let j = 0; j < f; j++) weights[r * f + j] = values[j * k + r]!;
  const bias = biasOf(c, k, 1);
  return bias === null ? null : { weights, bias, classCount: k, width: f };
}

/** A bias of K values ([K] or [1, K]) times `scale`, zeros when absent; null when of another shape. */
function biasOf(c: TensorProto | null, k: number, scale: number): Float32Array | null {
  if (c === null) return new Float32Array(k);
  const values = floatValues(c);
  if (values === null || values.length !== k) return null;
  return values.map((v) => scale * v);
}

/** The graph's inputs that are not initializers (older exporters list every weight among the inputs). */
export function nonInitializerInputs(graph: GraphProto): ValueInfoProto[] {
  const initializers = new Set(graph.initializer.map((t) => t.name));
  return graph.input.filter((i) => !initializers.has(i.name));
}

/** ONNX element types as onnxruntime names them (those an image model's input may have). */
const ORT_TYPES = new Map<number, string>([
  [TensorProto_DataType.FLOAT, 'float32'],
  [TensorProto_DataType.DOUBLE, 'float64'],
  [TensorProto_DataType.FLOAT16, 'float16'],
  [TensorProto_DataType.UINT8, 'uint8'],
  [TensorProto_DataType.INT8, 'int8'],
  [TensorProto_DataType.INT32, 'int32'],
  [TensorProto_DataType.INT64, 'int64'],
]);

/**
 * The graph's one input (initializers aside) as onnxruntime describes a session's, read from the
 * file without loading it: what an input spec is checked against before expensive work.
 */
export function graphInputMetadata(model: ModelProto, what: string): ort.InferenceSession.ValueMetadata {
  const inputs = nonInitializerInputs(model.graph!);
  if (inputs.length !== 1)
    throw new KnobError(
      'INVALID_INPUT',
      `${what}: the model has ${inputs.length} inputs (${inputs.map((i) => i.name).join(', ')}); one image input is expected`,
    );
  const input = inputs[0]!;
  const type = input.type?.value;
  if (type?.case !== 'tensorType') return { name: input.name, isTensor: false };
  const shape = (type.value.shape?.dim ?? []).map((d) =>
    d.value.case === 'dimValue' ? Number(d.value.value) : (d.value.value ?? ''),
  );
  const elementType = ORT_TYPES.get(type.value.elemType) ?? `ONNX element type ${type.value.elemType}`;
  return { name: input.name, isTensor: true, type: elementType as ort.Tensor.Type, shape };
}
