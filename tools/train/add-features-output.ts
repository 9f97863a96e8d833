/**
 * Gives a trained Knob model its `features` output (the penultimate layer: the static and the
 * dynamic stream's 96 ReLU features each, concatenated to [N, 192]) without retraining: one Concat
 * node over two values the graph already computes, a graph output, and the `knob.features`
 * metadata entry. Every other output is computed exactly as before (same nodes, same weights).
 * train_knob.py exports the same output for models trained from now on.
 *
 *   npx tsx tools/train/add-features-output.ts resources/models/knob-fmnist.onnx
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { readFileSync, writeFileSync } from 'node:fs';
import {
  AttributeProto_AttributeType,
  ModelProtoSchema,
  NodeProtoSchema,
  StringStringEntryProtoSchema,
} from 'onnx-buf';
import { valueInfo } from '../../src-main/core/deploy/graph-builder';

const STREAM_FEATURES = ['/net/static/Relu_2_output_0', '/net/dynamic/Relu_2_output_0'];
const WIDTH = 192;

const path = process.argv[2];
if (path === undefined) throw new Error('usage: add-features-output.ts MODEL.onnx');
const model = fromBinary(ModelProtoSchema, readFileSync(path));
const graph = model.graph!;
if (graph.output.some((o) => o.name === 'features')) throw new Error(`${path} already has a features output`);
for (const name of STREAM_FEATURES)
  if (!graph.node.some((n) => n.output.includes(name))) throw new Error(`${path}: no value '${name}'`);
graph.node.push(
  create(NodeProtoSchema, {
    name: '/features/Concat',
    opType: 'Concat',
    input: STREAM_FEATURES,
    output: ['features'],
    attribute: [{ name: 'axis', type: AttributeProto_AttributeType.INT, i: 1n }],
  }),
);
graph.output.push(valueInfo('features', 'float', ['N', WIDTH]));
model.metadataProps.push(
  create(StringStringEntryProtoSchema, {
    key: 'knob.features',
    value: JSON.stringify({
      name: 'features',
      width: WIDTH,
      layer: 'penultimate: the static and dynamic streams fc ReLU features, concatenated',
    }),
  }),
);
writeFileSync(path, toBinary(ModelProtoSchema, model));
process.stdout.write(`${path}: added output 'features' [N, ${WIDTH}]\n`);
