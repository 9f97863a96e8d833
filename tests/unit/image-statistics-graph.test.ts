import { readFileSync } from 'node:fs';
import { create, toBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema } from 'onnx-buf';
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { imageStatisticsNodes } from '../../src-main/core/deploy/image-statistics-graph';
import { GraphBuilder, valueInfo } from '../../src-main/core/deploy/graph-builder';
import { KnobError } from '../../src-shared/errors';
import type { InputSpec } from '../../src-shared/frames/input-spec';
import { framesToTensorInto, tensorMap, tensorShape } from '../../src-shared/frames/frame-to-tensor';
import { IMAGE_STATISTICS } from '../../src-shared/heads/image-statistics';

/**
 * The image statistics' ONNX nodes against the function that trained the shipped model
 * (tools/train/train_knob.py's image_statistics in torch; tests/fixtures/PROVENANCE.md), each
 * case's 8-bit pixels normalised by its input spec as the app's preprocessing does, in its layout.
 */
interface Case {
  name: string;
  spec: InputSpec;
  pixels: number[];
  count: number;
  statistics: number[][];
}
const reference = JSON.parse(
  readFileSync(new URL('../fixtures/reference/heads/image-statistics.json', import.meta.url), 'utf8'),
) as { cases: Case[] };

/** The model input of 8-bit pixels [N, C, H, W], by the app's own preprocessing (frame-to-tensor.ts). */
function modelInput(spec: InputSpec, pixels: number[], count: number): Float32Array {
  const { channels: c, height: h, width: w } = spec;
  // the app's frames are interleaved, [N, H, W, C]
  const frames = new Uint8Array(pixels.length);
  for (let i = 0; i < count; i++)
    for (let ch = 0; ch < c; ch++)
      for (let r = 0; r < h; r++)
        for (let col = 0; col < w; col++)
          frames[((i * h + r) * w + col) * c + ch] = pixels[((i * c + ch) * h + r) * w + col]!;
  const x = new Float32Array(pixels.length);
  framesToTensorInto(frames, count, spec, tensorMap(spec), x);
  return x;
}

/**
 * The statistics graph built for `built` (the spec the app resolved), run on `spec`'s images; the
 * model's height and width are named (dynamic) where they differ.
 */
async function statisticsOf(
  spec: InputSpec,
  input: Float32Array,
  count: number,
  opset: number,
  built: InputSpec = spec,
): Promise<Float32Array> {
  const b = new GraphBuilder(opset, 'knob_statistics::');
  b.op('Identity', [imageStatisticsNodes(b, built.name, built)], {}, 'statistics');
  const shape = tensorShape(spec, count).slice(1);
  const sides = spec.layout === 'NCHW' ? [1, 2] : [0, 1];
  const declared = built === spec ? shape : shape.map((d, at) => (sides.includes(at) ? `side${at}` : d));
  const model = create(ModelProtoSchema, {
    irVersion: 7n,
    opsetImport: [{ domain: '', version: BigInt(opset) }],
    graph: {
      name: 'statistics',
      node: b.nodes,
      initializer: b.initializers,
      input: [valueInfo(spec.name, 'float', ['N', ...declared])],
      output: [valueInfo('statistics', 'float', ['N', IMAGE_STATISTICS.length])],
    },
  });
  const session = await ort.InferenceSession.create(toBinary(ModelProtoSchema, model));
  try {
    const result = await session.run({ [spec.name]: new ort.Tensor('float32', input, [count, ...shape]) });
    expect(result.statistics!.dims).toEqual([count, IMAGE_STATISTICS.length]);
    return result.statistics!.data as Float32Array;
  } finally {
    await session.release();
  }
}

describe('the image statistics graph', () => {
  for (const [opset, cases] of [
    [13, reference.cases],
    // ReduceSum's axes became an input at 13: the oldest opset the app writes for keeps them an attribute
    [11, reference.cases],
    // before opset 9 Scan had another signature: the nodes run on the whole batch at once
    [8, reference.cases],
  ] as const)
    for (const c of cases)
      it(`gives train_knob.py's statistics at opset ${opset}: ${c.name}`, async () => {
        const got = await statisticsOf(c.spec, modelInput(c.spec, c.pixels, c.count), c.count, opset);
        c.statistics.forEach((row, i) =>
          row.forEach((expected, j) => {
            // float32 sums over a few hundred values, through the spec's affine map and back
            expect(
              Math.abs(got[i * IMAGE_STATISTICS.length + j]! - expected),
              `${IMAGE_STATISTICS[j]}, image ${i}`,
            ).toBeLessThan(2e-5 * (1 + Math.abs(expected)));
          }),
        );
      });

  it("counts each image's values from its shape: a model of dynamic size run at another size than the spec's", async () => {
    const c = reference.cases[1]!;
    const got = await statisticsOf(c.spec, modelInput(c.spec, c.pixels, c.count), c.count, 13, {
      ...c.spec,
      width: 224,
      height: 224,
    });
    c.statistics.forEach((row, i) =>
      row.forEach((expected, j) =>
        expect(Math.abs(got[i * IMAGE_STATISTICS.length + j]! - expected)).toBeLessThan(
          2e-5 * (1 + Math.abs(expected)),
        ),
      ),
    );
  });

  it('refuses images too small for the Laplacian, naming the size', () => {
    const spec = { ...reference.cases[0]!.spec, width: 2 };
    expect(() => imageStatisticsNodes(new GraphBuilder(13, 'x::'), 'image', spec)).toThrow(KnobError);
    expect(() => imageStatisticsNodes(new GraphBuilder(13, 'x::'), 'image', spec)).toThrow(/3 x 3 pixels.*2 x 12/);
  });
});
