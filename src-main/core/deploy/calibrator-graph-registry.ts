import type { ExtensionMethod } from '../../../src-shared/calibrators/calibrator-registry';
import { registerCalibratorDescriptor } from '../../../src-shared/calibrators/calibrator-registry';
import type { CalibratorDescriptor, SpecOf, SpecSchema } from '../../../src-shared/calibrators/calibrator-descriptor';
import { DAC_MIN_TEMPERATURE, DAC_SCORE_OFFSET } from '../../../src-shared/calibrators/density-aware-calibration';
import type {
  AnyCalibratorSpec,
  CalibrationMethod,
  CalibratorSpec,
} from '../../../src-shared/calibrators/output-calibrator';
import { KnobError } from '../../../src-shared/errors';
import {
  binOf,
  clippedLogs,
  EDGE_TOLERANCE,
  gatherPerRow,
  isotonicMap,
  meanNeighbourDistance,
  needFeatures,
  oneVsRestLogProbabilities,
  perClassConstant,
  plattMap,
  procalLogProbabilities,
  ptsTemperature,
  sigmoid,
  softplus,
  TO_DOUBLE,
  transposed,
} from './calibrator-graph';
import { appliedConditionNodes, carriesConditionState } from './condition-state-graph';
import type { GraphBuilder } from './graph-builder';

/**
 * Each output calibrator's ONNX nodes (the deploy half of src-shared/calibrators/calibrator-registry.ts),
 * keyed by the same methods: its type requires a builder for every built-in method, so a method
 * added there without one here does not compile. A builder maps the fused logits z [N, K] (float64;
 * `features` the model's [N, F] float output, or null) to what the app's calibrator returns before
 * the final softmax: calibrated logits, or log-probabilities floored at LOG_FLOOR. `stream`: the
 * graph carries a continuous stream's state (the condition-aware calibrator's hysteresis reads and
 * writes CONDITION_STATE there, condition-state-graph.ts); false in reset mode.
 */
export type CalibratorGraph<S> = (
  b: GraphBuilder,
  spec: S,
  z: string,
  k: number,
  features: string | null,
  stream: boolean,
) => string;

type BuiltInGraphs = { [M in CalibrationMethod]: CalibratorGraph<Extract<CalibratorSpec, { method: M }>> };

/** W z + b for row-major W [K, K]: z [N, K] times W transposed. */
function affine(b: GraphBuilder, x: string, weights: readonly number[], bias: readonly number[], k: number): string {
  return b.op('Add', [
    b.op('MatMul', [x, transposed(b, weights, k, k, 'weights')]),
    b.constant('double', [k], bias, 'bias'),
  ]);
}

/** The bin's value per class: `bin` int64 [N, K] into each class's values. */
function binValues(b: GraphBuilder, perClass: Array<{ values: number[] }>, bin: string): string {
  return gatherPerRow(
    b,
    perClass.map((f) => f.values),
    bin,
    (v) => v[v.length - 1] ?? 0,
  );
}

export const CALIBRATOR_GRAPHS = {
  temperature: (b, spec, z) => b.op('Div', [z, b.scalar('double', spec.temperature)]),
  vector: (b, spec, z, k) =>
    b.op('Add', [
      b.op('Mul', [z, b.constant('double', [k], spec.weights, 'weights')]),
      b.constant('double', [k], spec.bias, 'bias'),
    ]),
  matrix: (b, spec, z, k) => affine(b, z, spec.weights, spec.bias, k),
  dirichlet: (b, spec, z, k) => affine(b, b.op('LogSoftmax', [z], { axis: -1 }), spec.weights, spec.bias, k),
  pts: (b, spec, z) => b.op('Div', [z, ptsTemperature(b, spec, z)]),
  dac: (b, spec, z, _k, features) => {
    // T = T_min + softplus(a + b ln(s / s_mean + 1e-6)) (density-aware-calibration.ts)
    const c = (value: number) => b.scalar('double', value);
    const distance = meanNeighbourDistance(b, needFeatures(features, spec.method), spec.bank, spec.neighbours);
    const score = b.op('Log', [b.op('Add', [b.op('Div', [distance, c(spec.distanceScale)]), c(DAC_SCORE_OFFSET)])]);
    const temperature = b.op('Add', [
      c(DAC_MIN_TEMPERATURE),
      softplus(b, b.op('Add', [c(spec.a), b.op('Mul', [c(spec.b), score])])),
    ]);
    return b.op('Div', [z, temperature]);
  },
  procal: (b, spec, z, k, features) => procalLogProbabilities(b, spec, z, k, needFeatures(features, spec.method)),
  conditional: (b, spec, z, _k, features, stream) => {
    // condition-detector.ts: x = (f - mean) scale, scores = W x + b, the first maximum; over a
    // stream through the hysteresis (condition-hysteresis.ts); then z / T_c
    const { mean, scale, weights, bias } = spec.detector;
    const width = mean.length;
    const c = spec.conditions.length;
    const f = b.op('Cast', [needFeatures(features, spec.method)], { to: TO_DOUBLE });
    const x = b.op('Mul', [
      b.op('Sub', [f, b.constant('double', [width], mean, 'detector_mean')]),
      b.constant('double', [width], scale, 'detector_scale'),
    ]);
    const scores = b.op('Add', [
      b.op('MatMul', [x, transposed(b, weights, c, width, 'detector_weights')]),
      b.constant('double', [c], bias, 'detector_bias'),
    ]);
    const detected = b.op('ArgMax', [scores], { axis: -1, keepdims: 1 }); // first index on ties, as the app
    const condition = carriesConditionState(spec, stream ? 'continuous' : 'reset')
      ? appliedConditionNodes(b, detected, spec.hysteresisFrames)
      : detected;
    const temperature = b.op('Gather', [b.constant('double', [c], spec.temperatures, 'temperatures'), condition], {
      axis: 0,
    });
    return b.op('Div', [z, temperature]);
  },
  // The one-vs-rest methods: Platt and beta read p clipped to [1e-12, 1 - 1e-12] (binary-scores.ts),
  //   Platt: sigma(a ln(p / (1 - p)) + b);   beta: sigma(a ln p - b ln(1 - p) + c);
  // isotonic: linear between its points, clipped outside (isotonic-regression.ts); histogram binning:
  // the bin's value; scaling-binning: Platt, then the bin's value (right-closed bins).
  platt: (b, spec, z, k) => oneVsRestLogProbabilities(b, spec.method, z, k, (p) => plattMap(b, p, spec.perClass, k)),
  beta: (b, spec, z, k) =>
    oneVsRestLogProbabilities(b, spec.method, z, k, (p) => {
      const { logP, logNotP } = clippedLogs(b, p);
      const param = (value: (f: (typeof spec.perClass)[number]) => number, what: string) =>
        perClassConstant(b, k, (cls) => value(spec.perClass[cls]!), what);
      return sigmoid(
        b,
        b.op('Add', [
          b.op('Sub', [
            b.op('Mul', [logP, param((f) => f.a, 'beta_a')]),
            b.op('Mul', [logNotP, param((f) => f.b, 'beta_b')]),
          ]),
          param((f) => f.c, 'beta_c'),
        ]),
      );
    }),
  isotonic: (b, spec, z, k) =>
    oneVsRestLogProbabilities(b, spec.method, z, k, (p) => isotonicMap(b, spec.perClass, p, k)),
  'histogram-binning': (b, spec, z, k) =>
    oneVsRestLogProbabilities(b, spec.method, z, k, (p) => {
      // locateBin (bin-location.ts): inner edges e_1 .. e_{B-1}; the extra-bin rule also counts e_B
      const extra = spec.edgeRule === 'one-in-extra-bin';
      const inner = spec.perClass.map((f) => f.edges.slice(1, extra ? f.edges.length : f.edges.length - 1));
      const bin = binOf(b, p, inner, spec.edgeRule === 'right-closed' ? 'below' : 'at-or-below', EDGE_TOLERANCE);
      return binValues(b, spec.perClass, bin);
    }),
  'scaling-binning': (b, spec, z, k) =>
    oneVsRestLogProbabilities(b, spec.method, z, k, (p) => {
      const scaled = plattMap(
        b,
        p,
        spec.perClass.map((f) => f.platt),
        k,
      );
      const inner = spec.perClass.map((f) => f.edges.slice(1, f.edges.length - 1));
      return binValues(b, spec.perClass, binOf(b, scaled, inner, 'below', EDGE_TOLERANCE));
    }),
} satisfies BuiltInGraphs;

const builtIn = new Map<string, CalibratorGraph<AnyCalibratorSpec>>(
  Object.entries(CALIBRATOR_GRAPHS) as Array<[string, CalibratorGraph<AnyCalibratorSpec>]>,
);
const extensions = new Map<string, CalibratorGraph<AnyCalibratorSpec>>();

/**
 * Registers a calibrator at run time with both its halves: its descriptor (src-shared's
 * registerCalibratorDescriptor: fit, apply, schema, words) and its step-graph builder, so a bundle
 * or step graph of a session using it carries it. Its method is named `x-...`. Returns a function
 * that removes both again.
 */
export function registerCalibrator<S extends SpecSchema>(
  descriptor: CalibratorDescriptor<S> & { method: ExtensionMethod },
  graph: CalibratorGraph<SpecOf<S>>,
): () => void {
  const unregister = registerCalibratorDescriptor(descriptor);
  extensions.set(descriptor.method, graph as CalibratorGraph<AnyCalibratorSpec>);
  return () => {
    extensions.delete(descriptor.method);
    unregister();
  };
}

/** The calibrator's map of the fused logits, before the softmax; `features` is the model's [N, F] float output. */
export function calibratorMap(
  b: GraphBuilder,
  spec: AnyCalibratorSpec,
  z: string,
  k: number,
  features: string | null,
  stream: boolean,
): string {
  const graph = builtIn.get(spec.method) ?? extensions.get(spec.method);
  if (graph === undefined)
    throw new KnobError('INVALID_SETTINGS', `the ${spec.method} calibrator has no step-graph builder registered`);
  return graph(b, spec, z, k, features, stream);
}
