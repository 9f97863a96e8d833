import { normalDraw, seededRandom } from '../../src-shared/random';
import { buildOnnxModel, type InitializerSpec, type NodeSpec } from './onnx-builder';

/**
 * A real-sized classifier for the field-scale benchmark (issue 29): 224 x 224 x 3 in (NCHW, a
 * dynamic batch), 1,000 logits out under the name `logits`, about 0.5 GFLOP a frame in a stack of
 * 3 x 3 convolutions with ReLU (stride 2 five times, 224 -> 7), global average pooling and a dense
 * head: the shape and cost of a MobileNet-class network, with seeded random (He-initialised)
 * weights, since only its cost and its outputs' shape matter here.
 */
const LAYERS: Array<[inChannels: number, outChannels: number, stride: number]> = [
  [3, 16, 2],
  [16, 32, 2],
  [32, 32, 1],
  [32, 32, 1],
  [32, 64, 2],
  [64, 64, 1],
  [64, 64, 1],
  [64, 64, 1],
  [64, 128, 2],
  [128, 128, 1],
  [128, 128, 1],
  [128, 256, 2],
];

export const MOBILENET_LIKE_CLASSES = 1000;

export function mobilenetLikeClassifier(seed = 1): Uint8Array {
  const random = seededRandom(seed);
  const weights = (count: number, fanIn: number) => {
    const scale = Math.sqrt(2 / fanIn);
    return Float32Array.from({ length: count }, () => scale * normalDraw(random));
  };
  const nodes: NodeSpec[] = [];
  const initializers: InitializerSpec[] = [];
  let previous = 'x';
  LAYERS.forEach(([inC, outC, stride], i) => {
    initializers.push(
      { name: `w${i}`, dims: [outC, inC, 3, 3], values: weights(outC * inC * 9, inC * 9) },
      { name: `b${i}`, dims: [outC], values: new Float32Array(outC) },
    );
    nodes.push(
      {
        op: 'Conv',
        inputs: [previous, `w${i}`, `b${i}`],
        outputs: [`conv${i}`],
        attributes: { kernel_shape: [3, 3], pads: [1, 1, 1, 1], strides: [stride, stride] },
      },
      { op: 'Relu', inputs: [`conv${i}`], outputs: [`relu${i}`] },
    );
    previous = `relu${i}`;
  });
  const width = LAYERS[LAYERS.length - 1]![1];
  const k = MOBILENET_LIKE_CLASSES;
  initializers.push(
    { name: 'head', dims: [width, k], values: weights(width * k, width) },
    { name: 'headBias', dims: [k], values: new Float32Array(k) },
  );
  nodes.push(
    { op: 'GlobalAveragePool', inputs: [previous], outputs: ['pooled'] },
    { op: 'Flatten', inputs: ['pooled'], outputs: ['features'], attributes: { axis: 1 } },
    { op: 'MatMul', inputs: ['features', 'head'], outputs: ['product'] },
    { op: 'Add', inputs: ['product', 'headBias'], outputs: ['logits'] },
  );
  return buildOnnxModel({
    inputs: [{ name: 'x', shape: ['N', 3, 224, 224] }],
    outputs: [{ name: 'logits', shape: ['N', k] }],
    nodes,
    initializers,
  });
}
