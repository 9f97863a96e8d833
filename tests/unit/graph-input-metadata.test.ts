/**
 * The model's input read from the ONNX file without loading it (deploy/feature-tensor.ts
 * graphInputMetadata), which a sidecar's input spec is checked against before a fit: the same
 * description as onnxruntime gives of the loaded session, initializers listed as inputs (as older
 * exporters write them) left out, and a model of two inputs refused.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema } from 'onnx-buf';
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { graphInputMetadata, parseOnnxModel } from '../../src-main/core/deploy/feature-tensor';
import { valueInfo } from '../../src-main/core/deploy/graph-builder';
import { buildOnnxModel } from '../support/onnx-builder';

const IMAGE_MODEL = buildOnnxModel({
  inputs: [{ name: 'image', shape: ['N', 3, 32, 24] }],
  outputs: [{ name: 'logits', shape: ['N', 3, 32, 24] }],
  nodes: [{ op: 'Mul', inputs: ['image', 'scale'], outputs: ['logits'] }],
  initializers: [{ name: 'scale', dims: [1], values: Float32Array.of(2) }],
});

describe("the model's input, read from the file", () => {
  it('is what onnxruntime says of the loaded model', async () => {
    const session = await ort.InferenceSession.create(IMAGE_MODEL);
    try {
      expect(graphInputMetadata(parseOnnxModel(IMAGE_MODEL, 'm'), 'm')).toEqual(session.inputMetadata[0]);
    } finally {
      await session.release();
    }
  });

  it('leaves out initializers listed among the inputs', () => {
    const model = parseOnnxModel(IMAGE_MODEL, 'm');
    model.graph!.input.push(valueInfo('scale', 'float', [1]));
    const reread = parseOnnxModel(toBinary(ModelProtoSchema, create(ModelProtoSchema, model)), 'm');
    expect(graphInputMetadata(reread, 'm')).toMatchObject({ name: 'image', shape: ['N', 3, 32, 24] });
  });

  it('refuses a model of two inputs, naming them', () => {
    const two = buildOnnxModel({
      inputs: [
        { name: 'a', shape: [1, 4] },
        { name: 'b', shape: [1, 4] },
      ],
      outputs: [{ name: 'sum', shape: [1, 4] }],
      nodes: [{ op: 'Add', inputs: ['a', 'b'], outputs: ['sum'] }],
    });
    expect(() => graphInputMetadata(parseOnnxModel(two, 'two.onnx'), 'two.onnx')).toThrow(
      /two\.onnx: the model has 2 inputs \(a, b\); one image input is expected/,
    );
  });
});
