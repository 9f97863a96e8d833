import { toBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema } from 'onnx-buf';
import { KnobError } from '../../../src-shared/errors';
import type { InputSpec } from '../../../src-shared/frames/input-spec';
import { IMAGE_STATISTICS } from '../../../src-shared/heads/image-statistics';
import { FEATURES_OUTPUT } from '../inference/loaded-model';
import { TO_FLOAT } from './calibrator-graph';
import { parseOnnxModel, standardOpsetOf } from './feature-tensor';
import { GraphBuilder, renameValues, valueInfo } from './graph-builder';

/** Whether the images are large enough for the statistics (the Laplacian's 3 x 3 kernel). */
export function imageStatisticsApply(spec: InputSpec): boolean {
  return spec.height >= 3 && spec.width >= 3;
}

/**
 * The cheap image statistics the learned gate target reads beside the features (issue 31), as
 * tools/train/train_knob.py's `image_statistics` computes them for the shipped model, written as
 * ONNX nodes on a model's image input, so the recording a fit reads and the model it makes compute
 * them by the same graph. On the pixels p in [0, 1] (the input spec's affine map undone:
 * p = (x std_c + mean_c - lo) / (hi - lo)), over every channel and position of an image:
 *   mean, standard deviation (n - 1 in the denominator, as torch.std), mean |Laplacian| and its root
 *   mean square (the 4-neighbour kernel, valid positions), total variation (mean |vertical
 *   difference| + mean |horizontal difference|), and the fractions of values below 0.05 and above 0.95.
 * Noise raises the Laplacian energy and the variation, blur and contrast lower them, fog and brightness
 * move the mean and the extremes. [N, 7] float32, in IMAGE_STATISTICS's order. Float32 throughout (the
 * model's own type; onnxruntime's Conv has no float64 kernel).
 *
 * The nodes run on one image at a time, in a Scan over the batch (ONNX opset 9 and later). Each
 * statistic reads the image in passes of its own (about twenty): over a whole batch, 22 images of
 * 224 x 224 x 3 (13 MB), every pass streamed the batch from memory, where one image (0.6 MB) stays in
 * the cache across them all. In onnxruntime on one thread of this VM: 1.18 ms an image over a batch,
 * 0.67 ms in the Scan (2026-12-07). The values are the same but for the last bit of a few sums,
 * whose order of additions follows the tensor's size.
 */
export function imageStatisticsNodes(b: GraphBuilder, input: string, spec: InputSpec): string {
  if (!imageStatisticsApply(spec))
    throw new KnobError(
      'INVALID_INPUT',
      `the image statistics need images of 3 x 3 pixels or more; the input is ${spec.width} x ${spec.height}`,
    );
  // Scan took a batch axis and sequence lengths before opset 9: there, the batch at once
  if (b.opset < 9) return statisticsOfBatch(b, input, spec);
  const body = new GraphBuilder(b.opset, `${b.name('image')}::`);
  const image = body.name('image');
  const statistics = body.op('Reshape', [
    statisticsOfBatch(body, body.unsqueeze(image, 0), spec),
    body.constant('int64', [1], [BigInt(IMAGE_STATISTICS.length)], 'shape'),
  ]);
  const imageDims = spec.layout === 'NCHW' ? ['C', 'H', 'W'] : ['H', 'W', 'C'];
  const graph = body.graph(
    `${body.prefix}body`,
    [valueInfo(image, 'float', imageDims)],
    [valueInfo(statistics, 'float', [IMAGE_STATISTICS.length])],
  );
  return b.op('Scan', [input], { num_scan_inputs: 1, body: { graph } });
}

/** The statistics' nodes on a batch [N, ...] of images at once: [N, 7]. */
function statisticsOfBatch(b: GraphBuilder, input: string, spec: InputSpec): string {
  const c = spec.channels;
  const [lo, hi] = spec.value_range;
  // channel i reads entry i mod length, as the app's preprocessing does (frame-to-tensor.ts)
  const perChannel = (values: readonly number[]) => Array.from({ length: c }, (_, i) => values[i % values.length]!);
  const std = perChannel(spec.std);
  const mean = perChannel(spec.mean);
  // p = a_c x + b_c: folded into each statistic below rather than computed (a pass over every
  // value a frame: about 0.2 ms of 0.9 on a 224 x 224 x 3 image, 2026-12-06)
  const scale = std.map((s) => s / (hi - lo));
  const offset = mean.map((m) => (m - lo) / (hi - lo));
  const nchw = spec.layout === 'NCHW' ? input : b.op('Transpose', [input], { perm: [0, 3, 1, 2] });
  // Counts are read from each tensor's shape, not the spec's size: a model run outside the app on
  // images of another size (a dynamic height and width) still gets means.
  /** The length of `axis` of a tensor, as a float scalar. */
  const lengthOf = (x: string, axis: number) =>
    b.op('Cast', [b.op('Gather', [b.op('Shape', [x]), b.scalar('int64', axis, 'axis')], { axis: 0 })], {
      to: TO_FLOAT,
    });
  /** The mean over every value of each image: [N, 1]. */
  const imageMean = (x: string) => {
    const flat = b.op('Flatten', [x], { axis: 1 });
    return b.op('Div', [b.sumLastAxis(flat), lengthOf(flat, 1)]);
  };
  /** A depthwise kernel [kh, kw] on every channel, valid positions, times a_c: the kernel on p (it sums to 0, so b_c drops out). */
  const depthwise = (kernel: number[], kh: number, kw: number) =>
    b.op(
      'Conv',
      [
        nchw,
        b.constant(
          'float',
          [c, 1, kh, kw],
          scale.flatMap((a) => kernel.map((k) => a * k)),
          'kernel',
        ),
      ],
      { group: c, kernel_shape: [kh, kw] },
    );
  // mean and deviation from each channel's: p's channel mean is a_c m_c + b_c, and its sum of
  // squares about the image's mean M is a_c^2 SS_c + HW (a_c m_c + b_c - M)^2 (the law of total
  // variance), each channel's SS_c taken about its own mean
  // (each channel's sums over height and width, kept [N, C, 1, 1])
  const planeLength = b.op('Mul', [lengthOf(nchw, 2), lengthOf(nchw, 3)]);
  const planeMean = b.op('Div', [b.sumOverAxes(nchw, [2, 3]), planeLength]);
  const centred = b.op('Sub', [nchw, planeMean]);
  const planeSquares = b.op('Flatten', [b.sumOverAxes(b.op('Mul', [centred, centred]), [2, 3])], { axis: 1 });
  const channelMeans = b.op('Add', [
    b.op('Mul', [b.op('Flatten', [planeMean], { axis: 1 }), b.constant('float', [1, c], scale, 'scale')]),
    b.constant('float', [1, c], offset, 'offset'),
  ]);
  const average = b.op('Mul', [b.sumLastAxis(channelMeans), b.scalar('float', 1 / c, 'per_channel')]);
  const between = b.op('Sub', [channelMeans, average]);
  const squares = b.op('Add', [
    b.op('Mul', [
      planeSquares,
      b.constant(
        'float',
        [1, c],
        scale.map((a) => a * a),
        'scale_squared',
      ),
    ]),
    b.op('Mul', [b.op('Mul', [between, between]), planeLength]),
  ]);
  const count = b.op('Mul', [planeLength, b.scalar('float', c, 'channels')]);
  const sd = b.op('Sqrt', [b.op('Div', [b.sumLastAxis(squares), b.op('Sub', [count, b.scalar('float', 1, 'one')])])]);
  const laplacian = depthwise([0, -1, 0, -1, 4, -1, 0, -1, 0], 3, 3);
  const laplacianMean = imageMean(b.op('Abs', [laplacian]));
  const laplacianRms = b.op('Sqrt', [imageMean(b.op('Mul', [laplacian, laplacian]))]);
  const vertical = imageMean(b.op('Abs', [depthwise([-1, 1], 2, 1)]));
  const horizontal = imageMean(b.op('Abs', [depthwise([-1, 1], 1, 2)]));
  // p < t  <=>  x < (t - b_c) / a_c (a_c > 0): each channel's threshold on the model's values
  const fraction = (compare: 'Less' | 'Greater', threshold: number) =>
    imageMean(
      b.op(
        'Cast',
        [
          b.op(compare, [
            nchw,
            b.constant(
              'float',
              [1, c, 1, 1],
              scale.map((a, at) => (threshold - offset[at]!) / a),
              'threshold',
            ),
          ]),
        ],
        { to: TO_FLOAT },
      ),
    );
  const columns = [
    average,
    sd,
    laplacianMean,
    laplacianRms,
    b.op('Add', [vertical, horizontal]),
    fraction('Less', 0.05),
    fraction('Greater', 0.95),
  ];
  if (columns.length !== IMAGE_STATISTICS.length) throw new Error('the image statistics and their names disagree');
  return b.op('Concat', columns, { axis: 1 });
}

/**
 * The model a fit records with (make-knob-model.ts): its `features` output [N, F] becomes
 * [N, F + 7], the backbone's features then the image statistics of the same images. Only the
 * recording reads this model; the Knob model made from it keeps the backbone's `features` and
 * computes the statistics inside (knob-heads-graph.ts).
 */
export function withImageStatisticsInFeatures(bytes: Uint8Array, what: string, spec: InputSpec): Uint8Array {
  const model = parseOnnxModel(bytes, what);
  const graph = model.graph!;
  if (!graph.output.some((o) => o.name === FEATURES_OUTPUT))
    throw new KnobError('INVALID_INPUT', `${what} has no '${FEATURES_OUTPUT}' output`);
  const backbone = 'knob_statistics::backbone_features';
  renameValues(graph, new Map([[FEATURES_OUTPUT, backbone]]));
  const b = new GraphBuilder(standardOpsetOf(model) ?? 13, 'knob_statistics::');
  const statistics = imageStatisticsNodes(b, spec.name, spec);
  b.op('Concat', [backbone, statistics], { axis: 1 }, FEATURES_OUTPUT);
  graph.node.push(...b.nodes);
  graph.initializer.push(...b.initializers);
  graph.output = graph.output.map((o) =>
    o.name === backbone ? valueInfo(FEATURES_OUTPUT, 'float', ['N', 'F_and_statistics']) : o,
  );
  return toBinary(ModelProtoSchema, model);
}
