import { create, toBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema } from 'onnx-buf';
import * as ort from 'onnxruntime-node';
import type { CalibratorSpec } from '../../src-shared/calibrators/output-calibrator';
import { calibratorMap } from '../../src-main/core/deploy/calibrator-graph-registry';
import { GraphBuilder, valueInfo } from '../../src-main/core/deploy/graph-builder';

/**
 * A calibrator's ONNX nodes (calibrator-graph.ts) alone, as a model from logits z float64 [N, K]
 * (and features float [N, F] for the feature methods) to what the app's calibrator returns before
 * the final softmax, run in onnxruntime-node.
 */
export async function runCalibratorGraph(
  spec: CalibratorSpec,
  logits: Float64Array,
  k: number,
  features: { width: number; values: Float32Array } | null = null,
): Promise<Float64Array> {
  const b = new GraphBuilder(13, 'knob::');
  const out = calibratorMap(b, spec, 'z', k, features === null ? null : 'features', false);
  b.op('Identity', [out], {}, 'calibrated');
  const model = create(ModelProtoSchema, {
    irVersion: 7n,
    opsetImport: [{ domain: '', version: 13n }],
    graph: {
      name: 'calibrator',
      node: b.nodes,
      initializer: b.initializers,
      input: [
        valueInfo('z', 'double', ['N', k]),
        ...(features === null ? [] : [valueInfo('features', 'float', ['N', features.width])]),
      ],
      output: [valueInfo('calibrated', 'double', ['N', k])],
    },
  });
  const session = await ort.InferenceSession.create(toBinary(ModelProtoSchema, model));
  try {
    const n = logits.length / k;
    const feeds: Record<string, ort.Tensor> = { z: new ort.Tensor('float64', logits, [n, k]) };
    if (features !== null) feeds.features = new ort.Tensor('float32', features.values, [n, features.width]);
    const result = await session.run(feeds);
    return result.calibrated!.data as Float64Array;
  } finally {
    await session.release();
  }
}
