import { create, type MessageInitShape } from '@bufbuild/protobuf';
import {
  AttributeProto_AttributeType,
  GraphProtoSchema,
  NodeProtoSchema,
  TensorProto_DataType,
  TensorProtoSchema,
  ValueInfoProtoSchema,
  type GraphProto,
  type NodeProto,
  type TensorProto,
  type ValueInfoProto,
} from 'onnx-buf';

/**
 * Nodes and constants of an ONNX graph, written against ONNX's own schema (onnx-buf), for the
 * graphs Knob Studio composes around a user's model (step-graph.ts). Every name it makes starts
 * with its prefix; the models' own names are moved apart from it by renameApart.
 *
 * Operators whose signature changed between opsets are written for the graph's opset: ReduceSum
 * takes its axes as an input from opset 13, ReduceMax from opset 18, Unsqueeze from opset 13.
 */
export type ElementType = 'float' | 'double' | 'int64' | 'int32' | 'uint8' | 'bool';

export const ELEMENT_TYPES: Record<ElementType, TensorProto_DataType> = {
  float: TensorProto_DataType.FLOAT,
  double: TensorProto_DataType.DOUBLE,
  int64: TensorProto_DataType.INT64,
  int32: TensorProto_DataType.INT32,
  uint8: TensorProto_DataType.UINT8,
  bool: TensorProto_DataType.BOOL,
};

type AttributeValue = number | number[] | string | { float: number } | { graph: GraphProto };

export class GraphBuilder {
  readonly nodes: NodeProto[] = [];
  readonly initializers: TensorProto[] = [];
  private count = 0;

  constructor(
    readonly opset: number,
    readonly prefix: string,
  ) {}

  /** A fresh value name. */
  name(what: string): string {
    return `${this.prefix}${what}_${this.count++}`;
  }

  /** One node; returns its outputs' names (fresh unless given). */
  node(
    opType: string,
    inputs: string[],
    attributes: Record<string, AttributeValue> = {},
    outputs?: string[],
  ): string[] {
    const out = outputs ?? [this.name(opType)];
    this.nodes.push(
      create(NodeProtoSchema, {
        name: this.name(`${opType}_node`),
        opType,
        input: inputs,
        output: out,
        attribute: Object.entries(attributes).map(([name, value]) => attribute(name, value)),
      }),
    );
    return out;
  }

  /** A node with one output. */
  op(opType: string, inputs: string[], attributes: Record<string, AttributeValue> = {}, output?: string): string {
    return this.node(opType, inputs, attributes, output === undefined ? undefined : [output])[0]!;
  }

  /** A constant tensor (an initializer). */
  constant(type: ElementType, dims: number[], values: ArrayLike<number> | ArrayLike<bigint>, what = 'const'): string {
    const name = this.name(what);
    this.initializers.push(tensor(name, type, dims, values));
    return name;
  }

  scalar(type: ElementType, value: number, what = 'scalar'): string {
    return this.constant(type, [], type === 'int64' ? [BigInt(value)] : [value], what);
  }

  /** This builder's nodes and constants as a graph of their own: the body of a Scan, a Loop or an If. */
  graph(name: string, inputs: ValueInfoProto[], outputs: ValueInfoProto[]): GraphProto {
    return create(GraphProtoSchema, {
      name,
      node: this.nodes,
      initializer: this.initializers,
      input: inputs,
      output: outputs,
    });
  }

  /** x with a new axis of length 1 at `axis` (Unsqueeze takes its axes as an input from opset 13). */
  unsqueeze(x: string, axis: number): string {
    if (this.opset >= 13) return this.op('Unsqueeze', [x, this.constant('int64', [1], [BigInt(axis)], 'axes')]);
    return this.op('Unsqueeze', [x], { axes: [axis] });
  }

  /** Sum over the last axis of [N, K], kept as [N, 1]. */
  sumLastAxis(x: string): string {
    return this.sumOverAxes(x, [-1]);
  }

  /** Sum over `axes`, each kept with length 1. */
  sumOverAxes(x: string, axes: number[]): string {
    if (this.opset >= 13)
      return this.op('ReduceSum', [x, this.constant('int64', [axes.length], axes.map(BigInt), 'axes')], {
        keepdims: 1,
      });
    return this.op('ReduceSum', [x], { axes, keepdims: 1 });
  }

  /** Maximum over the last axis of [N, K], kept as [N, 1]. */
  maxLastAxis(x: string): string {
    if (this.opset >= 18) return this.op('ReduceMax', [x, this.constant('int64', [1], [-1n], 'axes')], { keepdims: 1 });
    return this.op('ReduceMax', [x], { axes: [-1], keepdims: 1 });
  }

  /** min(max(x, lo), hi) with scalar bounds of x's type. */
  clip(x: string, type: ElementType, lo: number, hi: number): string {
    return this.op('Clip', [x, this.scalar(type, lo, 'lo'), this.scalar(type, hi, 'hi')]);
  }

  /** Softmax over the last axis of [N, K] (the same in every opset for 2-D input). */
  softmax(x: string): string {
    return this.op('Softmax', [x], { axis: this.opset >= 13 ? -1 : 1 });
  }
}

function attribute(name: string, value: AttributeValue) {
  if (typeof value === 'string')
    return { name, type: AttributeProto_AttributeType.STRING, s: new TextEncoder().encode(value) };
  if (Array.isArray(value)) return { name, type: AttributeProto_AttributeType.INTS, ints: value.map(BigInt) };
  if (typeof value === 'object' && 'graph' in value)
    return { name, type: AttributeProto_AttributeType.GRAPH, g: value.graph };
  if (typeof value === 'object') return { name, type: AttributeProto_AttributeType.FLOAT, f: value.float };
  return { name, type: AttributeProto_AttributeType.INT, i: BigInt(value) };
}

/** A tensor with its values in raw little-endian bytes (ONNX's raw_data). */
export function tensor(
  name: string,
  type: ElementType,
  dims: number[],
  values: ArrayLike<number> | ArrayLike<bigint>,
): TensorProto {
  const raw = rawBytes(type, values);
  return create(TensorProtoSchema, { name, dataType: ELEMENT_TYPES[type], dims: dims.map(BigInt), rawData: raw });
}

function rawBytes(type: ElementType, values: ArrayLike<number> | ArrayLike<bigint>): Uint8Array<ArrayBuffer> {
  const typed =
    type === 'float'
      ? Float32Array.from(values as ArrayLike<number>)
      : type === 'double'
        ? Float64Array.from(values as ArrayLike<number>)
        : type === 'int64'
          ? BigInt64Array.from(values as ArrayLike<bigint>)
          : type === 'int32'
            ? Int32Array.from(values as ArrayLike<number>)
            : Uint8Array.from(values as ArrayLike<number>);
  return new Uint8Array(typed.buffer as ArrayBuffer, typed.byteOffset, typed.byteLength).slice();
}

/** A graph input or output: its element type and shape (a string names a symbolic dimension). */
export function valueInfo(name: string, type: ElementType, shape: Array<number | string>): ValueInfoProto {
  const init: MessageInitShape<typeof ValueInfoProtoSchema> = {
    name,
    type: {
      value: {
        case: 'tensorType',
        value: {
          elemType: ELEMENT_TYPES[type],
          shape: {
            dim: shape.map((d) => ({
              value: typeof d === 'number' ? { case: 'dimValue', value: BigInt(d) } : { case: 'dimParam', value: d },
            })),
          },
        },
      },
    },
  };
  return create(ValueInfoProtoSchema, init);
}

/**
 * Gives graphs that are composed into one distinct names, in place: every name of a graph (node
 * inputs, outputs and names, initializers, graph inputs, outputs and value infos, in its subgraphs
 * too, so an If or Loop body still finds the outer values it reads) takes the graph's prefix, and
 * one that is then taken (in `reserved`, starting with `reservedPrefix`, or an earlier graph's) is
 * written model/NAME, with _1, _2, ... after it until it is free. The one mechanism for a second
 * model (prefixed) and for a model whose names are the composing graph's (the PyTorch default
 * `logits`, say). Returns each graph's map from its own names to the composed ones.
 */
export function renameApart(
  graphs: Array<{ graph: GraphProto; prefix: string }>,
  reserved: ReadonlySet<string>,
  reservedPrefix: string,
): Array<Map<string, string>> {
  const taken = new Set(reserved);
  const isTaken = (name: string) => taken.has(name) || name.startsWith(reservedPrefix);
  return graphs.map(({ graph, prefix }) => {
    const own = new Set<string>();
    mapNames(graph, (name) => {
      own.add(name);
      return name;
    });
    const renames = new Map<string, string>();
    const clashing: string[] = [];
    for (const name of own)
      if (isTaken(prefix + name)) clashing.push(name);
      else renames.set(name, prefix + name);
    for (const name of renames.values()) taken.add(name);
    for (const name of clashing) {
      let candidate = `model/${prefix}${name}`;
      for (let i = 1; isTaken(candidate); i++) candidate = `model/${prefix}${name}_${i}`;
      taken.add(candidate);
      renames.set(name, candidate);
    }
    mapNames(graph, (name) => renames.get(name)!);
    return renames;
  });
}

/** Renames the values `renames` names, wherever the graph (and its subgraphs) reads or writes them. */
export function renameValues(graph: GraphProto, renames: ReadonlyMap<string, string>): void {
  mapNames(graph, (name) => renames.get(name) ?? name);
}

/** Replaces every non-empty name of a graph and its subgraphs by `rename`'s (an empty name is an omitted input). */
function mapNames(graph: GraphProto, rename: (name: string) => string): void {
  const map = (name: string) => (name === '' ? '' : rename(name));
  for (const node of graph.node) {
    node.input = node.input.map(map);
    node.output = node.output.map(map);
    node.name = map(node.name);
    for (const a of node.attribute)
      for (const sub of a.g === undefined ? a.graphs : [a.g, ...a.graphs]) mapNames(sub, rename);
  }
  for (const t of graph.initializer) t.name = map(t.name);
  for (const t of graph.sparseInitializer) if (t.values !== undefined) t.values.name = map(t.values.name);
  for (const v of [...graph.input, ...graph.output, ...graph.valueInfo]) v.name = map(v.name);
  for (const q of graph.quantizationAnnotation) q.tensorName = map(q.tensorName);
}
