/**
 * What the step graph builder refuses, each with a message that names the problem: bytes that are
 * not ONNX, a model count that does not fit the contract, an opset before 13, custom operator
 * domains and a feature calibrator on a model without features (a model value named like one of
 * the step graph's own is renamed, not refused: tests/integration/step-graph-names.test.ts).
 * Also: a colour model's frames (NHWC and NCHW) reach it as the app's preprocessing makes them,
 * within float32 rounding (the graph runs in onnxruntime-node).
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema } from 'onnx-buf';
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { buildFeatureBank, featureBankSpec } from '../../src-shared/calibrators/feature-bank';
import type { CalibratorSpec } from '../../src-shared/calibrators/output-calibrator';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import type { InputSpec } from '../../src-shared/frames/input-spec';
import { framesToTensorInto, tensorMap } from '../../src-shared/frames/frame-to-tensor';
import { buildStepGraph, type StepGraphOptions } from '../../src-main/core/deploy/step-graph';
import { buildOnnxModel, GREY_28X28_INPUT, linearClassifier } from '../support/onnx-builder';

const K = 3;
const GREY: InputSpec = GREY_28X28_INPUT;

function classifier(overrides: { opset?: number; outputName?: string } = {}): Uint8Array {
  const bytes = linearClassifier({
    weights: Float32Array.from({ length: 784 * K }, (_, i) => ((i * 31) % 17) / 1000 - 0.008),
    bias: Float32Array.of(0.1, -0.2, 0.05),
    ...(overrides.outputName === undefined ? {} : { outputName: overrides.outputName }),
  });
  if (overrides.opset === undefined) return bytes;
  const model = fromBinary(ModelProtoSchema, bytes);
  model.opsetImport = [{ ...model.opsetImport[0]!, version: BigInt(overrides.opset) }];
  return toBinary(ModelProtoSchema, create(ModelProtoSchema, model));
}

const options = (patch: Partial<StepGraphOptions>): StepGraphOptions => ({
  model: classifier(),
  contract: 'single-classifier',
  adapter: { t0: 2, certaintyRule: 'entropy' },
  input: GREY,
  gate: DEFAULT_GATE_SETTINGS,
  calibrator: null,
  classCount: K,
  ...patch,
});

describe('buildStepGraph refuses', () => {
  it('bytes that are not an ONNX model', () => {
    expect(() => buildStepGraph(options({ model: new TextEncoder().encode('not a model at all') }))).toThrow(
      /the model is not an ONNX model/,
    );
  });

  it('a model count that does not fit the contract', () => {
    expect(() => buildStepGraph(options({ contract: 'two-classifiers' }))).toThrow(
      /two-classifiers contract takes two models/,
    );
    expect(() => buildStepGraph(options({ secondModel: classifier() }))).toThrow(/takes two models, the others one/);
  });

  it('a model before opset 13, saying how to fix it', () => {
    expect(() => buildStepGraph(options({ model: classifier({ opset: 11 }) }))).toThrow(
      /opset 11; the step graph needs 13 or later \(re-export/,
    );
  });

  it('custom operator domains', () => {
    const model = fromBinary(ModelProtoSchema, classifier());
    model.opsetImport.push({ $typeName: 'onnx.OperatorSetIdProto', domain: 'com.example', version: 1n });
    expect(() => buildStepGraph(options({ model: toBinary(ModelProtoSchema, model) }))).toThrow(
      /operator domains com\.example; the step graph takes standard ONNX operators only/,
    );
  });

  it("a feature calibrator (DAC, ProCal) on a model without a 'features' output", () => {
    const bank = featureBankSpec(buildFeatureBank(Float32Array.of(1, 0, 0, 1), 2, 2));
    const calibrator: CalibratorSpec = {
      method: 'dac',
      classCount: K,
      neighbours: 1,
      bank,
      distanceScale: 1,
      a: 0,
      b: 1,
    };
    expect(() => buildStepGraph(options({ calibrator }))).toThrow(
      /the dac calibrator reads the model's 'features' output, which this model does not give/,
    );
  });
});

describe('the step graph preprocessing', () => {
  for (const layout of ['NHWC', 'NCHW'] as const)
    it(`feeds an ${layout} colour model the app's preprocessed values`, async () => {
      const spec: InputSpec = {
        ...GREY,
        layout,
        width: 4,
        height: 2,
        channels: 3,
        mean: [0.1, 0.2, 0.3],
        std: [0.5, 0.25, 2],
      };
      // the model returns its input flattened, so the graph's fused logits are the preprocessed frame
      const width = spec.width * spec.height * spec.channels;
      const model = buildOnnxModel({
        inputs: [
          {
            name: 'x',
            shape:
              layout === 'NHWC'
                ? ['N', spec.height, spec.width, spec.channels]
                : ['N', spec.channels, spec.height, spec.width],
          },
        ],
        outputs: [{ name: 'flat', shape: ['N', width] }],
        nodes: [{ op: 'Flatten', inputs: ['x'], outputs: ['flat'], attributes: { axis: 1 } }],
      });
      const graph = buildStepGraph(
        options({ model, input: spec, classCount: width, gate: { ...DEFAULT_GATE_SETTINGS, mode: 'reset' } }),
      );
      const frames = Uint8Array.from({ length: 2 * width }, (_, i) => (i * 97) % 256);
      const session = await ort.InferenceSession.create(graph);
      const out = await session.run({
        frames: new ort.Tensor('uint8', frames, [2, spec.height, spec.width, spec.channels]),
      });
      const expected = new Float32Array(2 * width);
      framesToTensorInto(frames, 2, spec, tensorMap(spec), expected);
      // fused logits = (1 - g) z / T0 + g z: undo the adapter to read z back
      const gate = out['gate']!.data as Float32Array;
      const logits = out['logits']!.data as Float32Array;
      for (let n = 0; n < 2; n++) {
        const scale = (1 - gate[n]!) / 2 + gate[n]!;
        for (let i = 0; i < width; i++) expect(logits[n * width + i]! / scale).toBeCloseTo(expected[n * width + i]!, 5);
      }
      await session.release();
    });
});
