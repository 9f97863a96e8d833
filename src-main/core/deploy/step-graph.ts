import { create, toBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema, type GraphProto, type ModelProto } from 'onnx-buf';
import type { ModelContract } from '../../../src-shared/api/model-options';
import type { AnyCalibratorSpec } from '../../../src-shared/calibrators/output-calibrator';
import { KnobError } from '../../../src-shared/errors';
import type { InputSpec } from '../../../src-shared/frames/input-spec';
import type { CertaintyRule } from '../../../src-shared/fusion/gate-target';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { resetCoefficientsInto } from '../../../src-shared/gate/step-coefficients';
import { classifierLogitsOutput, FEATURES_OUTPUT } from '../inference/loaded-model';
import { calibratorMap } from './calibrator-graph-registry';
import { CONDITION_STATE, carriesConditionState } from './condition-state-graph';
import { nonInitializerInputs, parseOnnxModel, standardOpsetOf } from './feature-tensor';
import { GraphBuilder, renameApart, valueInfo } from './graph-builder';

/**
 * The ONNX step graph of a tuned calibrator (issue 15): one model that takes a batch of 8-bit frames
 * (and, in continuous mode, each stream's gate state and frame interval) and returns what the app
 * shows for those frames, with everything the app applies folded in as constants: the input's
 * preprocessing, the model contract (the model's own branches, or the single-classifier adapter's
 * T0 and u* rule, or two classifiers' agreement), the gate (variant, discretisation, zeta, wn;
 * coefficients computed in the graph from dt, so irregular intervals behave as in the app), the
 * convex fusion and the output calibrator. Standard operators only (the user's model's opset), so
 * any ONNX runtime takes it; tested here in onnxruntime-node and onnxruntime-web (Python
 * onnxruntime and Triton cannot be run on the build machine).
 *
 * Each batch element is one stream's next frame (as Triton's sequence batcher forms batches): the
 * gate state of a stream is carried by the caller from one call to the next.
 *
 * Inputs:  frames uint8 [N, H, W, C] (row-major pixels, as the app's sources deliver them);
 *          continuous mode only: g, v, u_prev, dt: float64 [N, 1] (state after the previous frame,
 *          and the interval since it in seconds; a stream starts at g = g0, v = 0, u_prev = g0 and
 *          dt = the nominal frame interval).
 * Outputs: probabilities float [N, K] (after the calibrator), logits float [N, K] (fused, before
 *          it), u_star float [N, 1], gate float [N, 1] (g clamped to [0, 1], the fusion weight);
 *          continuous mode only: g_next, v_next, u_prev_next float64 [N, 1].
 * The state is float64 like the app's, so a stream's trajectory does not drift from it. A
 * condition-aware calibrator with a hysteresis adds its state in continuous mode: condition,
 * condition_run in and their _next out (condition-state-graph.ts).
 */
export interface StepGraphOptions {
  /** The ONNX model file's bytes (the first classifier for two-classifiers). */
  model: Uint8Array;
  /** The second classifier (two-classifiers contract). */
  secondModel?: Uint8Array;
  contract: ModelContract;
  /** single-classifier: z_static = z / T0 and the u* rule. */
  adapter: { t0: number; certaintyRule: CertaintyRule } | null;
  input: InputSpec;
  gate: GateSettings;
  calibrator: AnyCalibratorSpec | null;
  classCount: number;
}

export const STEP_INPUTS = { frames: 'frames', g: 'g', v: 'v', uPrev: 'u_prev', dt: 'dt' } as const;
export const STEP_OUTPUTS = {
  probabilities: 'probabilities',
  logits: 'logits',
  uStar: 'u_star',
  gate: 'gate',
  gNext: 'g_next',
  vNext: 'v_next',
  uPrevNext: 'u_prev_next',
} as const;
/** The state tensors of continuous mode: (input, output) pairs, as Triton's implicit state names them. */
export const STEP_STATE = [
  { input: STEP_INPUTS.g, output: STEP_OUTPUTS.gNext },
  { input: STEP_INPUTS.v, output: STEP_OUTPUTS.vNext },
  { input: STEP_INPUTS.uPrev, output: STEP_OUTPUTS.uPrevNext },
] as const;

const PREFIX = 'knob::';
/** The step graph's public names (the deployment contract); a model's own names are moved apart from them. */
const RESERVED_NAMES: ReadonlySet<string> = new Set([
  ...Object.values(STEP_INPUTS),
  ...Object.values(STEP_OUTPUTS),
  ...CONDITION_STATE.flatMap((s) => [s.input, s.output]),
]);

export function buildStepGraph(options: StepGraphOptions): Uint8Array {
  const first = parseModel(options.model, 'the model');
  const second = options.secondModel === undefined ? null : parseModel(options.secondModel, 'the second model');
  if ((options.contract === 'two-classifiers') !== (second !== null))
    throw new KnobError('INVALID_INPUT', 'the two-classifiers contract takes two models, the others one');
  const opset = Math.max(standardOpsetOf(first) ?? 0, second === null ? 0 : (standardOpsetOf(second) ?? 0));
  if (opset < 13)
    throw new KnobError(
      'INVALID_INPUT',
      `the model uses ONNX opset ${opset}; the step graph needs 13 or later (re-export the model with opset >= 13)`,
    );
  const b = new GraphBuilder(opset, PREFIX);
  const k = options.classCount;
  const continuous = options.gate.mode === 'continuous';

  // The models' names apart from the step graph's and from each other (the second one's prefixed),
  // the models otherwise unchanged.
  const models = second === null ? [first.graph!] : [first.graph!, second.graph!];
  const renames = renameApart(
    models.map((graph, i) => ({ graph, prefix: i === 0 ? '' : 'second::' })),
    RESERVED_NAMES,
    PREFIX,
  );

  // Frames to each model's input tensor (the app's own lookup table, frame-to-tensor.ts), then the
  // models' nodes, then everything after them: the nodes stay in topological order.
  const pixels = preprocess(b, options.input);
  for (const graph of models) b.op('Identity', [pixels], {}, modelInputName(graph));
  const beforeModels = b.nodes.length;
  const branches = contractOutputs(b, options, models, renames[0]!, k);

  // Gate (float64, as the app computes it).
  const uStar = b.op('Cast', [branches.uRef], { to: TO_DOUBLE });
  const u = b.clip(uStar, 'double', 0, 1);
  let g: string;
  if (continuous) {
    const next = gateStep(b, options.gate, u);
    g = next.g;
    b.op('Identity', [next.g], {}, STEP_OUTPUTS.gNext);
    b.op('Identity', [next.v], {}, STEP_OUTPUTS.vNext);
    b.op('Identity', [u], {}, STEP_OUTPUTS.uPrevNext);
  } else {
    // g = u + P11(tau) (g0 - u): the exact step response at tau from rest at g0 (step-coefficients.ts)
    const reset = new Float64Array(2);
    resetCoefficientsInto(options.gate, reset);
    const e0 = b.op('Sub', [b.scalar('double', options.gate.g0), u]);
    g = b.op('Add', [u, b.op('Mul', [b.scalar('double', reset[0]!), e0])]);
  }

  // Convex fusion with g clamped at the readout (convex-fusion.ts), then the calibrator.
  const gate = b.clip(g, 'double', 0, 1);
  const keep = b.op('Sub', [b.scalar('double', 1), gate]);
  const zStatic = b.op('Cast', [branches.zStatic], { to: TO_DOUBLE });
  const zDyn = b.op('Cast', [branches.zDyn], { to: TO_DOUBLE });
  const fused = b.op('Add', [b.op('Mul', [keep, zStatic]), b.op('Mul', [gate, zDyn])]);
  const calibrated =
    options.calibrator === null ? fused : calibratorMap(b, options.calibrator, fused, k, branches.features, continuous);
  const conditionState = carriesConditionState(options.calibrator, options.gate.mode) ? CONDITION_STATE : [];
  b.op('Cast', [b.softmax(calibrated)], { to: TO_FLOAT }, STEP_OUTPUTS.probabilities);
  b.op('Cast', [fused], { to: TO_FLOAT }, STEP_OUTPUTS.logits);
  b.op('Cast', [u], { to: TO_FLOAT }, STEP_OUTPUTS.uStar);
  b.op('Cast', [gate], { to: TO_FLOAT }, STEP_OUTPUTS.gate);

  const { width, height, channels } = options.input;
  const state = (name: string) => valueInfo(name, 'double', ['N', 1]);
  const composed = create(ModelProtoSchema, {
    irVersion: first.irVersion > 7n ? first.irVersion : 7n,
    producerName: 'knob-studio',
    opsetImport: [{ domain: '', version: BigInt(opset) }],
    graph: {
      name: 'knob_step',
      node: [...b.nodes.slice(0, beforeModels), ...models.flatMap((m) => m.node), ...b.nodes.slice(beforeModels)],
      initializer: [...models.flatMap((m) => m.initializer), ...b.initializers],
      input: [
        valueInfo(STEP_INPUTS.frames, 'uint8', ['N', height, width, channels]),
        ...(continuous
          ? [state(STEP_INPUTS.g), state(STEP_INPUTS.v), state(STEP_INPUTS.uPrev), state(STEP_INPUTS.dt)]
          : []),
        ...conditionState.map((s) => state(s.input)),
      ],
      output: [
        valueInfo(STEP_OUTPUTS.probabilities, 'float', ['N', k]),
        valueInfo(STEP_OUTPUTS.logits, 'float', ['N', k]),
        valueInfo(STEP_OUTPUTS.uStar, 'float', ['N', 1]),
        valueInfo(STEP_OUTPUTS.gate, 'float', ['N', 1]),
        ...(continuous ? [state(STEP_OUTPUTS.gNext), state(STEP_OUTPUTS.vNext), state(STEP_OUTPUTS.uPrevNext)] : []),
        ...conditionState.map((s) => state(s.output)),
      ],
    },
    metadataProps: [{ key: 'knob.step_graph', value: JSON.stringify({ version: 1, mode: options.gate.mode }) }],
  });
  return toBinary(ModelProtoSchema, composed);
}

const TO_DOUBLE = 11; // TensorProto.DataType.DOUBLE
const TO_FLOAT = 1; // TensorProto.DataType.FLOAT

function parseModel(bytes: Uint8Array, what: string): ModelProto {
  const model = parseOnnxModel(bytes, what);
  const custom = model.opsetImport.filter((o) => o.domain !== '' && o.domain !== 'ai.onnx');
  if (custom.length > 0)
    throw new KnobError(
      'INVALID_INPUT',
      `${what} uses operator domains ${custom.map((o) => o.domain).join(', ')}; the step graph takes standard ONNX operators only`,
    );
  return model;
}

/** The model's one graph input that is not an initializer: its image. */
function modelInputName(graph: GraphProto): string {
  const inputs = nonInitializerInputs(graph);
  if (inputs.length !== 1)
    throw new KnobError('INVALID_INPUT', `the model has ${inputs.length} inputs; one image input is expected`);
  return inputs[0]!.name;
}

/**
 * uint8 frames [N, H, W, C] to the model's input, x = (lo + (b / 255) (hi - lo) - mean_c) / std_c
 * (frame-to-tensor.ts), as the affine map b s_c + o_c in float32: within two float32 roundings of
 * the app's values (it tabulates them in float64), which moves the fused probabilities by less
 * than 1e-6. The map runs on planes [N, C, H W]: onnxruntime's CPU broadcast is vectorised along
 * the innermost axis only, and over [N, H, W, 1] the same Mul took 2.2 ms instead of 0.1 ms per
 * batch of 256 28 x 28 frames (a Gather through the app's table took 1.7 ms, the formula in
 * float64 2.9 ms). Then the model's layout.
 */
function preprocess(b: GraphBuilder, spec: InputSpec): string {
  const [lo, hi] = spec.value_range;
  const { channels: c, height: h, width: w } = spec;
  const dims = (...d: number[]) => b.constant('int64', [d.length], d.map(BigInt), 'shape');
  const perChannel = (value: (channel: number) => number, what: string) =>
    b.constant(
      'float',
      [c, 1],
      Array.from({ length: c }, (_, channel) => value(channel)),
      what,
    );
  const std = (channel: number) => spec.std[channel % spec.std.length]!;
  const mean = (channel: number) => spec.mean[channel % spec.mean.length]!;
  // planes [N, C, H W] (one channel: already in that order)
  const planar = c === 1 ? STEP_INPUTS.frames : b.op('Transpose', [STEP_INPUTS.frames], { perm: [0, 3, 1, 2] });
  const planes = b.op('Cast', [b.op('Reshape', [planar, dims(0, c, h * w)])], { to: TO_FLOAT });
  const values = b.op('Add', [
    b.op('Mul', [planes, perChannel((channel) => (hi - lo) / 255 / std(channel), 'scale')]),
    perChannel((channel) => (lo - mean(channel)) / std(channel), 'offset'),
  ]);
  const nchw = b.op('Reshape', [values, dims(0, c, h, w)]);
  if (spec.layout === 'NCHW') return nchw;
  return c === 1 ? b.op('Reshape', [nchw, dims(0, h, w, 1)]) : b.op('Transpose', [nchw], { perm: [0, 2, 3, 1] });
}

/**
 * z_static, z_dyn [N, K] and u_ref [N, 1] (float) under the contract, and the model's `features`
 * [N, F] where it has them (Knob-native, or a single classifier's exposed by `knob features`, as
 * the app's loader reads them).
 */
function contractOutputs(
  b: GraphBuilder,
  options: StepGraphOptions,
  models: GraphProto[],
  firstRenames: ReadonlyMap<string, string>,
  k: number,
): { zStatic: string; zDyn: string; uRef: string; features: string | null } {
  const outputsOf = (graph: GraphProto) => graph.output.map((o) => o.name);
  if (options.contract === 'knob-native') {
    // the first model's output by its own name, as it is named in the composed graph
    const first = outputsOf(models[0]!);
    const output = (name: string): string | null => {
      const renamed = firstRenames.get(name);
      return renamed !== undefined && first.includes(renamed) ? renamed : null;
    };
    const required = (name: string): string => {
      const found = output(name);
      if (found === null) throw new KnobError('INVALID_INPUT', `the Knob-native model has no output '${name}'`);
      return found;
    };
    // u_ref may come as [N] or [N, 1]
    return {
      zStatic: required('z_static'),
      zDyn: required('z_dyn'),
      uRef: b.op('Reshape', [required('u_ref'), b.constant('int64', [2], [-1n, 1n], 'shape')]),
      features: output(FEATURES_OUTPUT),
    };
  }
  // A single classifier's logits, and its features where `knob features` exposed them: as the
  // app's loader reads them (classifierLogitsOutput), by the names they have in the composed graph.
  const renamedFeatures = firstRenames.get(FEATURES_OUTPUT);
  const logitsOf = (graph: GraphProto, what: string): string => {
    const outputs = outputsOf(graph).map((o) => (o === renamedFeatures ? FEATURES_OUTPUT : o));
    const logits = classifierLogitsOutput(outputs);
    if (logits === null)
      throw new KnobError(
        'INVALID_INPUT',
        `${what} has ${outputs.length} outputs; one [N, K] logits output is expected (and at most a 'features' output beside it)`,
      );
    return b.op('Cast', [logits], { to: TO_DOUBLE });
  };
  const singleFeatures =
    renamedFeatures !== undefined && outputsOf(models[0]!).includes(renamedFeatures) ? renamedFeatures : null;
  if (options.contract === 'single-classifier') {
    const adapter = options.adapter;
    if (adapter === null)
      throw new KnobError('INVALID_INPUT', 'the single-classifier contract needs its adapter (T0, u* rule)');
    const z = logitsOf(models[0]!, 'the model');
    // z_static = z / T0, in float64 then rounded to float32 as temperedLogitsInto does
    const zStatic = b.op('Cast', [b.op('Mul', [z, b.scalar('double', 1 / adapter.t0)])], { to: TO_FLOAT });
    const zDyn = b.op('Cast', [z], { to: TO_FLOAT });
    const p = b.softmax(z);
    let u: string;
    if (adapter.certaintyRule === 'entropy') {
      // 1 - H(p) / ln K, terms with p = 0 contributing 0 (gate-target.ts)
      const plogp = b.op('Where', [
        b.op('Greater', [p, b.scalar('double', 0)]),
        b.op('Mul', [p, b.op('Log', [p])]),
        b.scalar('double', 0),
      ]);
      const entropy = b.op('Neg', [b.sumLastAxis(plogp)]);
      u = b.clip(
        b.op('Sub', [b.scalar('double', 1), b.op('Div', [entropy, b.scalar('double', Math.log(k))])]),
        'double',
        0,
        1,
      );
    } else {
      const top2 = b.node('TopK', [p, b.constant('int64', [1], [2n], 'k')], { axis: -1, largest: 1, sorted: 1 }, [
        b.name('top2'),
        b.name('top2_index'),
      ])[0]!;
      const [p1, p2] = b.node('Split', [top2, b.constant('int64', [2], [1n, 1n], 'split')], { axis: -1 }, [
        b.name('p1'),
        b.name('p2'),
      ]);
      u = b.op('Sub', [p1!, p2!]);
    }
    return { zStatic, zDyn, uRef: b.op('Cast', [u], { to: TO_FLOAT }), features: singleFeatures };
  }
  // two classifiers: z_static = a, z_dyn = b, u* = 1 - TV(softmax a, softmax b)
  const a = logitsOf(models[0]!, 'the first model');
  const second = logitsOf(models[1]!, 'the second model');
  const tv = b.op('Mul', [
    b.scalar('double', 0.5),
    b.sumLastAxis(b.op('Abs', [b.op('Sub', [b.softmax(a), b.softmax(second)])])),
  ]);
  const u = b.clip(b.op('Sub', [b.scalar('double', 1), tv]), 'double', 0, 1);
  return {
    zStatic: b.op('Cast', [a], { to: TO_FLOAT }),
    zDyn: b.op('Cast', [second], { to: TO_FLOAT }),
    uRef: b.op('Cast', [u], { to: TO_FLOAT }),
    features: null,
  };
}

/**
 * One continuous-mode step (gate-kernel.ts, step-coefficients.ts): the coefficients from dt, then
 *   u_bar = u + blend (u_prev - u);  e = g - u_bar;  e' = P11 e + P12 v;  v' = P21 e + P22 v;
 *   g' = u_bar + e'.
 */
function gateStep(b: GraphBuilder, settings: GateSettings, u: string): { g: string; v: string } {
  const { g, v, uPrev, dt } = STEP_INPUTS;
  const c = (value: number) => b.scalar('double', value);
  const mul = (...xs: string[]) => xs.reduce((x, y) => b.op('Mul', [x, y]));
  const add = (...xs: string[]) => xs.reduce((x, y) => b.op('Add', [x, y]));
  const sub = (x: string, y: string) => b.op('Sub', [x, y]);
  const div = (x: string, y: string) => b.op('Div', [x, y]);
  const exp = (x: string) => b.op('Exp', [x]);
  const { variant, discretization, zeta, wnRadPerSec: wn } = settings;
  if (variant === 'instant') return { g: u, v: mul(v, c(0)) };
  let blend = 0;
  let p: { p11: string; p12: string | null; p21: string | null; p22: string | null };
  if (discretization === 'zoh') {
    if (variant === 'ema') p = { p11: exp(mul(dt, c(-wn))), p12: null, p21: null, p22: null };
    else p = zohTransition(b, zeta, wn, dt);
  } else {
    blend = 0.5;
    // pre-warped step (2/wn) tan(wn h / 2) below Nyquist, else h (tustinStepSeconds); tan as
    // sin / cos, since onnxruntime's CPU Tan takes float only
    let h: string = dt;
    if (settings.tustinPrewarp) {
      const half = mul(dt, c(wn / 2));
      h = b.op('Where', [
        b.op('Less', [half, c(Math.PI / 2)]),
        mul(c(2 / wn), div(b.op('Sin', [half]), b.op('Cos', [half]))),
        dt,
      ]);
    }
    if (variant === 'ema') {
      const a = mul(h, c(wn / 2));
      p = { p11: div(sub(c(1), a), add(c(1), a)), p12: null, p21: null, p22: null };
    } else {
      const damping = mul(h, c(zeta * wn));
      const stiffness = mul(h, h, c((wn * wn) / 4));
      const det = add(c(1), damping, stiffness);
      p = {
        p11: div(sub(add(c(1), damping), stiffness), det),
        p12: div(h, det),
        p21: div(mul(h, c(-wn * wn)), det),
        p22: div(sub(sub(c(1), damping), stiffness), det),
      };
    }
  }
  const uBar = blend === 0 ? u : add(u, mul(c(blend), sub(uPrev, u)));
  const e = sub(g, uBar);
  const eNext = p.p12 === null ? mul(p.p11, e) : add(mul(p.p11, e), mul(p.p12, v));
  const vNext = p.p21 === null ? mul(v, c(0)) : add(mul(p.p21, e), mul(p.p22!, v));
  return { g: add(uBar, eNext), v: vNext };
}

/**
 * e^{A h} of the second-order gate from h (zoh-transition.ts): the regime (under-, critically or
 * over-damped) is fixed by zeta; the series near zeta = 1 (|q| < 1e-6) is chosen per element.
 */
function zohTransition(b: GraphBuilder, zeta: number, wn: number, h: string) {
  const c = (value: number) => b.scalar('double', value);
  const mul = (...xs: string[]) => xs.reduce((x, y) => b.op('Mul', [x, y]));
  const add = (...xs: string[]) => xs.reduce((x, y) => b.op('Add', [x, y]));
  const sub = (x: string, y: string) => b.op('Sub', [x, y]);
  const div = (x: string, y: string) => b.op('Div', [x, y]);
  const sigma = zeta * wn;
  const wnSq = wn * wn;
  const e = b.op('Exp', [mul(h, c(-sigma))]);
  const q = mul(h, h, c((zeta * zeta - 1) * wnSq));
  // near zeta = 1: ec = e (1 + q/2 + q^2/24), es = e h (1 + q/6 + q^2/120)
  const seriesEc = mul(e, add(c(1), mul(q, c(1 / 2)), mul(q, q, c(1 / 24))));
  const seriesEs = mul(e, h, add(c(1), mul(q, c(1 / 6)), mul(q, q, c(1 / 120))));
  let p11: string;
  let p12: string;
  let p22: string;
  const fromEcEs = (ec: string, es: string) => ({
    p11: add(ec, mul(es, c(sigma))),
    p12: es,
    p22: sub(ec, mul(es, c(sigma))),
  });
  const series = fromEcEs(seriesEc, seriesEs);
  if (zeta === 1) ({ p11, p12, p22 } = series);
  else {
    let regular: { p11: string; p12: string; p22: string };
    if (zeta < 1) {
      const wd = wn * Math.sqrt(1 - zeta * zeta);
      const angle = mul(h, c(wd));
      regular = fromEcEs(mul(e, b.op('Cos', [angle])), div(mul(e, b.op('Sin', [angle])), c(wd)));
    } else {
      const mu = wn * Math.sqrt(zeta * zeta - 1);
      const slowRate = wnSq / (sigma + mu);
      const fastRate = sigma + mu;
      const a = b.op('Exp', [mul(h, c(-slowRate))]);
      const bb = b.op('Exp', [mul(h, c(-fastRate))]);
      regular = {
        p11: div(sub(mul(a, c(fastRate)), mul(bb, c(slowRate))), c(2 * mu)),
        p12: div(sub(a, bb), c(2 * mu)),
        p22: div(sub(mul(bb, c(fastRate)), mul(a, c(slowRate))), c(2 * mu)),
      };
    }
    const near = b.op('Less', [b.op('Abs', [q]), c(1e-6)]);
    const pick = (x: string, y: string) => b.op('Where', [near, x, y]);
    p11 = pick(series.p11, regular.p11);
    p12 = pick(series.p12, regular.p12);
    p22 = pick(series.p22, regular.p22);
  }
  return { p11, p12, p21: mul(p12, c(-wnSq)), p22 };
}
