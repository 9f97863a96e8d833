/**
 * A Knob model whose gate reads image statistics (issue 31), end to end in onnxruntime: a small
 * classifier on 6 x 6 images with a `features` output records a dataset through the model
 * make-knob-model.ts records with (its features followed by the image statistics,
 * image-statistics-graph.ts), the heads are fitted on that recording, and the model
 * knob-heads-graph.ts writes computes the statistics from its own input again: its u*, z_static and
 * z_dyn are the app's (knobHeadOutputs on the recording) to float32's rounding, its `features` output
 * is the backbone's alone, and it keeps the input spec the statistics undo.
 */
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { withImageStatisticsInFeatures } from '../../src-main/core/deploy/image-statistics-graph';
import { knobModelWithHeads } from '../../src-main/core/deploy/knob-heads-graph';
import { parseOnnxModel } from '../../src-main/core/deploy/feature-tensor';
import type { InputSpec } from '../../src-shared/frames/input-spec';
import { IMAGE_STATISTICS } from '../../src-shared/heads/image-statistics';
import { fitKnobHeads, knobHeadOutputs, type HeadsData } from '../../src-shared/heads/knob-heads';
import { normalDraw, seededRandom } from '../../src-shared/random';
import { expectOutputsOfHeads } from '../support/head-outputs';
import { buildOnnxModel } from '../support/onnx-builder';

const SIDE = 6;
const PIXELS = SIDE * SIDE;
const K = 4;
const SPEC: InputSpec = {
  name: 'image',
  layout: 'NCHW',
  width: SIDE,
  height: SIDE,
  channels: 1,
  value_range: [0, 1],
  mean: [0.5],
  std: [0.25],
};

/**
 * logits = flatten(image) W + b, `features` = flatten(image): a backbone that is the pixels, and a
 * head that sums each quadrant (the class is the brightest).
 */
function classifier(): Uint8Array {
  const quadrantOf = (pixel: number) =>
    (Math.floor(pixel / SIDE) < SIDE / 2 ? 0 : 2) + (pixel % SIDE < SIDE / 2 ? 0 : 1);
  return buildOnnxModel({
    inputs: [{ name: 'image', shape: ['N', 1, SIDE, SIDE] }],
    outputs: [
      { name: 'logits', shape: ['N', K] },
      { name: 'features', shape: ['N', PIXELS] },
    ],
    nodes: [
      { op: 'Flatten', inputs: ['image'], outputs: ['flat'], attributes: { axis: 1 } },
      { op: 'Identity', inputs: ['flat'], outputs: ['features'] },
      { op: 'MatMul', inputs: ['flat', 'W'], outputs: ['product'] },
      { op: 'Add', inputs: ['product', 'b'], outputs: ['logits'] },
    ],
    initializers: [
      {
        name: 'W',
        dims: [PIXELS, K],
        values: Float32Array.from({ length: PIXELS * K }, (_, at) =>
          quadrantOf(Math.floor(at / K)) === at % K ? 1 : 0,
        ),
      },
      { name: 'b', dims: [K], values: new Float32Array(K) },
    ],
  });
}

/** Images whose class is a bright quadrant; every other one noisy (severity 5); normalised by SPEC. */
function images(count: number) {
  const random = seededRandom(8);
  const x = new Float32Array(count * PIXELS);
  const labels = new Int32Array(count);
  const severity = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const y = Math.floor(random() * K);
    labels[i] = y;
    severity[i] = i % 2 === 1 ? 5 : 0;
    for (let r = 0; r < SIDE; r++)
      for (let c = 0; c < SIDE; c++) {
        const quadrant = (r < SIDE / 2 ? 0 : 2) + (c < SIDE / 2 ? 0 : 1);
        const noise = severity[i]! > 0 ? 0.5 * normalDraw(random) : 0.02 * normalDraw(random);
        const p = Math.min(1, Math.max(0, (quadrant === y ? 0.7 : 0.3) + noise));
        x[i * PIXELS + r * SIDE + c] = (p - SPEC.mean[0]!) / SPEC.std[0]!;
      }
  }
  return { x, labels, severity };
}

async function run(bytes: Uint8Array, x: Float32Array, count: number) {
  const session = await ort.InferenceSession.create(bytes);
  try {
    return await session.run({ image: new ort.Tensor('float32', x, [count, 1, SIDE, SIDE]) });
  } finally {
    await session.release();
  }
}

describe('a Knob model whose gate reads image statistics', () => {
  it("computes them from its own input as the recording did: the app's u* and branches, the backbone's features", async () => {
    const count = 800;
    const source = classifier();
    const { x, labels, severity } = images(count);
    const recorded = await run(withImageStatisticsInFeatures(source, 'test model', SPEC), x, count);
    const width = PIXELS + IMAGE_STATISTICS.length;
    expect(recorded.features!.dims).toEqual([count, width]);
    const all = recorded.features!.data as Float32Array;
    const data: HeadsData = {
      features: new Float32Array(count * PIXELS),
      width: PIXELS,
      statistics: new Float32Array(count * IMAGE_STATISTICS.length),
      labels,
      severity,
      classCount: K,
      recordedDynamic: recorded.logits!.data as Float32Array,
    };
    for (let i = 0; i < count; i++) {
      data.features.set(all.subarray(i * width, i * width + PIXELS), i * PIXELS);
      data.statistics!.set(all.subarray(i * width + PIXELS, (i + 1) * width), i * IMAGE_STATISTICS.length);
    }
    const { heads } = fitKnobHeads(data, { seed: 5 });
    const written = knobModelWithHeads(source, 'test model', heads, {
      training: {},
      featuresLayer: 'the pixels',
      input: SPEC,
      labels: null,
    });
    const result = await run(written, x, count);
    expect(result.features!.dims).toEqual([count, PIXELS]);
    const expected = knobHeadOutputs(
      heads,
      data,
      Int32Array.from({ length: count }, (_, i) => i),
    );
    expectOutputsOfHeads(result, expected);
    const metadata = new Map(parseOnnxModel(written, 'written').metadataProps.map((p) => [p.key, p.value]));
    expect(JSON.parse(metadata.get('knob.input')!)).toEqual(SPEC);

    // a model made from the made model, twice over (the same heads on the same backbone): its
    // earlier heads step aside under their own names and it gives the same outputs
    let again = written;
    for (let generation = 0; generation < 2; generation++)
      again = knobModelWithHeads(again, 'made model', heads, {
        training: {},
        featuresLayer: 'x',
        input: SPEC,
        labels: null,
      });
    expectOutputsOfHeads(await run(again, x, count), expected);
  });
});
