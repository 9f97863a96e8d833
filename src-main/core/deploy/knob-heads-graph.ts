import { create, toBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema, StringStringEntryProtoSchema } from 'onnx-buf';
import { KnobError } from '../../../src-shared/errors';
import type { InputSpec } from '../../../src-shared/frames/input-spec';
import type { KnobHeads, Standardisation } from '../../../src-shared/heads/knob-heads';
import { classifierLogitsOutput, FEATURES_OUTPUT, KNOB_OUTPUTS } from '../inference/loaded-model';
import { sigmoid, TO_DOUBLE, TO_FLOAT, transposed } from './calibrator-graph';
import { parseOnnxModel, standardOpsetOf } from './feature-tensor';
import { imageStatisticsNodes } from './image-statistics-graph';
import { GraphBuilder, renameValues, valueInfo } from './graph-builder';

/**
 * A Knob-native model made of a classifier whose features are an output (`knob features`) and the
 * heads fitted on them (src-shared/heads/knob-heads.ts): the user's graph unchanged, then, on its
 * `features` [N, F] (float32, as the heads' fit read them), in float64 as the app computes them,
 *   x = (features - mean) scale,
 *   z_static = e^s (x Ws^T + bs),  z_dyn = x Wd^T + bd,  u_ref = sigmoid(relu(x W1^T + b1) w2 + b2),
 * (the gate's first layer reading the image statistics of the model's input beside x, where the heads
 * were fitted with them), the outputs of the Knob-native contract (z_static, z_dyn, u_ref, features), the classifier's own
 * logits output dropped (a Knob-native source's branches and u_ref renamed source/NAME and dropped
 * likewise: new heads on its backbone). The metadata keeps the model's own and adds the contract
 * version, the features' width, `training` (what was fitted on what), and the input spec and labels
 * the model ran under where they are known (from a sidecar too, which stays beside the original):
 * the model made reads its frames and names its classes as its source did, wherever the file goes.
 * Standard operators only.
 */
const HEADS_PREFIX = 'knob_heads::';

export function knobModelWithHeads(
  source: Uint8Array,
  what: string,
  heads: KnobHeads,
  /**
   * input: the input spec the model ran under (knob.input of the model made; null: unknown, the
   * source's own metadata kept), which the gate's image statistics are computed under where the
   * heads read them (image-statistics-graph.ts). labels: its class names (knob.labels; null likewise).
   */
  metadata: { training: object; featuresLayer: string; input: InputSpec | null; labels: readonly string[] | null },
): Uint8Array {
  const model = parseOnnxModel(source, what);
  const graph = model.graph!;
  const outputs = graph.output.map((o) => o.name);
  const knobNative = KNOB_OUTPUTS.every((name) => outputs.includes(name));
  if (!outputs.includes(FEATURES_OUTPUT) || (!knobNative && classifierLogitsOutput(outputs) === null))
    throw new KnobError(
      'INVALID_INPUT',
      `${what}: a classifier with a '${FEATURES_OUTPUT}' output beside its logits, or a Knob-native model, is expected (knob features writes the first)`,
    );
  // A Knob-native source's own heads step aside (renamed source/NAME, no longer outputs): new heads
  // on its backbone. Heads this function wrote before (a model made from a made model) step aside
  // with their inner names too, which the new heads' builder would otherwise give again; a source
  // that stepped aside before goes under source/source/, and so on.
  const names = [...graph.node.flatMap((n) => [n.name, ...n.output]), ...graph.initializer.map((t) => t.name)];
  let aside = 'source/';
  while (names.some((name) => name.startsWith(aside))) aside = `source/${aside}`;
  const stepAside = [...(knobNative ? KNOB_OUTPUTS : []), ...names.filter((name) => name.startsWith(HEADS_PREFIX))];
  renameValues(graph, new Map(stepAside.map((name) => [name, `${aside}${name}`])));
  const taken = new Set(graph.node.flatMap((n) => n.output));
  const clash = KNOB_OUTPUTS.find((name) => taken.has(name));
  if (clash !== undefined) throw new KnobError('INVALID_INPUT', `${what} already has a tensor named '${clash}'`);
  const width = heads.mean.length;
  const k = heads.staticHead.classCount;
  const h = heads.gate.b1.length;
  const input = metadata.input;
  if (heads.statistics !== null && input === null)
    throw new Error('heads that read image statistics need the input spec they were computed under');
  if (metadata.labels !== null && metadata.labels.length !== heads.staticHead.classCount)
    throw new Error(`${metadata.labels.length} labels for heads of ${heads.staticHead.classCount} classes`);
  const b = new GraphBuilder(standardOpsetOf(model) ?? 13, HEADS_PREFIX);
  // in float64 as the app fits and applies the heads (a float32 mean subtracted from features far
  // from zero would offset every standardised value), the outputs cast to float32 at the end
  const constant = (values: ArrayLike<number>, what: string) => b.constant('double', [values.length], values, what);
  const standardised = (value: string, standardisation: Standardisation, what: string) =>
    b.op('Mul', [
      b.op('Sub', [b.op('Cast', [value], { to: TO_DOUBLE }), constant(standardisation.mean, `${what}_mean`)]),
      constant(standardisation.scale, `${what}_scale`),
    ]);
  const x = standardised(FEATURES_OUTPUT, heads, 'features');
  const linear = (input: string, weights: ArrayLike<number>, bias: ArrayLike<number>, rows: number, name: string) =>
    b.op('Add', [
      b.op('MatMul', [input, transposed(b, Array.from(weights), rows, weights.length / rows, `${name}_weights`)]),
      constant(bias, `${name}_bias`),
    ]);
  // the gate reads the image statistics of the model's own input beside the features, computed by
  // the nodes that computed them for the recording it was fitted on
  const gateInput =
    heads.statistics === null
      ? x
      : b.op(
          'Concat',
          [x, standardised(imageStatisticsNodes(b, input!.name, input!), heads.statistics!, 'statistics')],
          { axis: 1 },
        );
  const toFloat = (value: string, output: string) => b.op('Cast', [value], { to: TO_FLOAT }, output);
  toFloat(
    b.op('Mul', [
      linear(x, heads.staticHead.weights, heads.staticHead.bias, k, 'static'),
      b.scalar('double', Math.exp(heads.gate.logStaticScale), 'static_scale'),
    ]),
    'z_static',
  );
  toFloat(linear(x, heads.dynamicHead.weights, heads.dynamicHead.bias, k, 'dynamic'), 'z_dyn');
  const hidden = b.op('Relu', [linear(gateInput, heads.gate.w1, heads.gate.b1, h, 'gate_hidden')]);
  const a = b.op('Add', [
    b.op('MatMul', [hidden, b.constant('double', [h, 1], heads.gate.w2, 'gate_out_weights')]),
    b.scalar('double', heads.gate.b2, 'gate_out_bias'),
  ]);
  // the logistic as the app computes it (gateTargetOf), not onnxruntime's float64 Sigmoid
  toFloat(sigmoid(b, a), 'u_ref');

  graph.node.push(...b.nodes);
  graph.initializer.push(...b.initializers);
  graph.output = [
    valueInfo('z_static', 'float', ['N', k]),
    valueInfo('z_dyn', 'float', ['N', k]),
    valueInfo('u_ref', 'float', ['N', 1]),
    valueInfo(FEATURES_OUTPUT, 'float', ['N', width]),
  ];
  const written = {
    'knob.contract_version': '1',
    'knob.features': JSON.stringify({ name: FEATURES_OUTPUT, width, layer: metadata.featuresLayer }),
    'knob.training': JSON.stringify(metadata.training),
    ...(input === null ? {} : { 'knob.input': JSON.stringify(input) }),
    ...(metadata.labels === null ? {} : { 'knob.labels': JSON.stringify(metadata.labels) }),
  };
  const kept = model.metadataProps.filter((p) => !Object.hasOwn(written, p.key));
  model.metadataProps = [
    ...kept,
    ...Object.entries(written).map(([key, value]) => create(StringStringEntryProtoSchema, { key, value })),
  ];
  model.producerName = 'knob-studio';
  return toBinary(ModelProtoSchema, model);
}
