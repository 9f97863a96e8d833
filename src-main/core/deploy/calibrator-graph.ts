import { SCORE_EPS } from '../../../src-shared/calibrators/binary-scores';
import { featureBankOf, type FeatureBankSpec } from '../../../src-shared/calibrators/feature-bank';
import { LOG_FLOOR } from '../../../src-shared/calibrators/calibrator-descriptor';
import type { ExtensionMethod } from '../../../src-shared/calibrators/calibrator-registry';
import type { CalibrationMethod, CalibratorSpec } from '../../../src-shared/calibrators/output-calibrator';
import { MIN_TEMPERATURE as PTS_MIN_TEMPERATURE } from '../../../src-shared/calibrators/parameterized-temperature-scaling';
import { probabilityFloorOf, rowProbabilityFloor } from '../../../src-shared/calibrators/probability-floor';
import { PROCAL_TOP_MARGIN } from '../../../src-shared/calibrators/proximity-informed-calibration';
import { KnobError } from '../../../src-shared/errors';
import type { GraphBuilder } from './graph-builder';

/**
 * The ONNX nodes the output calibrators are built of (calibrator-graph-registry.ts gives each
 * method's builder), on the fused logits z [N, K] (float64), returning what the app's calibrator
 * returns before the final softmax: calibrated logits, or log-probabilities floored at LOG_FLOOR.
 * Standard operators only (opset 13).
 *
 * Binned maps (histogram binning, scaling-binning, ProCal's cells) are discontinuous at their edges,
 * and the graph's softmax and exp round differently from V8's in the last bits; a value that
 * ties with an edge in the app (saturated probabilities at 0 or 1, or at the clip 1e-12 that makes
 * many scores equal, whose midpoint is then an edge) could cross it in the graph. Values within a
 * relative EDGE_TOLERANCE of an edge are therefore read as on the edge, which is the app's reading of
 * a tie; the two differ only for values in that window off a tie. Relative, because fitted edges
 * can be as small as 1e-166 (a Platt map of a nearly separable class) and every binned value is
 * non-negative (probabilities, Platt outputs, proximities).
 */
export const EDGE_TOLERANCE = 1e-12;

const TO_INT64 = 7; // TensorProto.DataType.INT64
export const TO_DOUBLE = 11;
export const TO_FLOAT = 1;

/** The refusal of a feature calibrator on a model without a `features` output. */
export function needFeatures(features: string | null, method: string): string {
  if (features === null)
    throw new KnobError(
      'INVALID_SETTINGS',
      `the ${method} calibrator reads the model's 'features' output, which this model does not give (a Knob-native model, or a classifier whose features knob features exposed)`,
    );
  return features;
}

/** Row-major [rows, columns] values as the constant of their transpose [columns, rows]. */
export function transposed(
  b: GraphBuilder,
  values: readonly number[],
  rows: number,
  columns: number,
  what: string,
): string {
  const out = Array.from({ length: rows * columns }, (_, at) => values[(at % rows) * columns + Math.floor(at / rows)]!);
  return b.constant('double', [columns, rows], out, what);
}

/** softplus(x) as the app computes it: x above 30, else ln(1 + e^x). */
export function softplus(b: GraphBuilder, x: string): string {
  const c = (value: number) => b.scalar('double', value);
  return b.op('Where', [b.op('Greater', [x, c(30)]), x, b.op('Log', [b.op('Add', [c(1), b.op('Exp', [x])])])]);
}

/**
 * The logistic function as the app computes it (binary-scores.ts sigmoid), from Exp: onnxruntime's
 * float64 Sigmoid returned 0 where the app has 4.5e-42 (a Platt map of a nearly separable class),
 * and scaling-binning's bins are that fine.
 */
export function sigmoid(b: GraphBuilder, x: string): string {
  const one = b.scalar('double', 1);
  const e = b.op('Exp', [b.op('Neg', [b.op('Abs', [x])])]); // e^{-|x|} <= 1, never overflows
  const denominator = b.op('Add', [one, e]);
  // x >= 0: 1 / (1 + e^{-x});  x < 0: e^{x} / (1 + e^{x}), as binary-scores.ts sigmoid
  return b.op('Where', [
    b.op('Less', [x, b.scalar('double', 0)]),
    b.op('Div', [e, denominator]),
    b.op('Div', [one, denominator]),
  ]);
}

/**
 * PTS (parameterized-temperature-scaling.ts): the top-k logits sorted descending, standardised, then
 *   T = T_min + softplus(w3 . tanh(W2 tanh(W1 x + b1) + b2) + b3).
 */
export function ptsTemperature(b: GraphBuilder, spec: Extract<CalibratorSpec, { method: 'pts' }>, z: string): string {
  const { topK, hidden } = spec;
  const top = b.node('TopK', [z, b.constant('int64', [1], [BigInt(topK)], 'k')], { axis: -1, largest: 1, sorted: 1 }, [
    b.name('pts_top'),
    b.name('pts_top_index'),
  ])[0]!;
  const x = b.op('Div', [
    b.op('Sub', [top, b.constant('double', [topK], spec.inputMean, 'pts_mean')]),
    b.constant('double', [topK], spec.inputScale, 'pts_scale'),
  ]);
  const layer = (input: string, weights: number[], inputs: number, bias: number[]) =>
    b.op('Tanh', [
      b.op('Add', [
        b.op('MatMul', [input, transposed(b, weights, hidden, inputs, 'pts_w')]),
        b.constant('double', [hidden], bias, 'pts_b'),
      ]),
    ]);
  const h2 = layer(layer(x, spec.w1, topK, spec.b1), spec.w2, hidden, spec.b2);
  const o = b.op('Add', [
    b.op('MatMul', [h2, b.constant('double', [hidden, 1], spec.w3, 'pts_w3')]),
    b.scalar('double', spec.b3),
  ]);
  return b.op('Add', [b.scalar('double', PTS_MIN_TEMPERATURE), softplus(b, o)]);
}

/**
 * The mean Euclidean distance [N, 1] from each row's L2-normalised features (rounded to float32, as
 * the app keeps its query) to its k nearest rows of the bank (feature-bank.ts), by
 * |q|^2 - 2 q.b + |b|^2 in float64 (its rounding is far below the 1e-5 the check allows), then
 * TopK of the smallest.
 */
export function meanNeighbourDistance(b: GraphBuilder, features: string, spec: FeatureBankSpec, k: number): string {
  const c = (value: number) => b.scalar('double', value);
  const bank = featureBankOf(spec);
  const f = b.op('Cast', [features], { to: TO_DOUBLE });
  const squaredNorm = b.sumLastAxis(b.op('Mul', [f, f]));
  const positive = b.op('Greater', [squaredNorm, c(0)]);
  const inverse = b.op('Where', [positive, b.op('Reciprocal', [b.op('Sqrt', [squaredNorm])]), c(0)]);
  const query = b.op('Cast', [b.op('Cast', [b.op('Mul', [f, inverse])], { to: TO_FLOAT })], { to: TO_DOUBLE });
  const bankNorms = Array.from({ length: bank.rows }, (_, r) => {
    let sum = 0;
    for (let j = 0; j < bank.width; j++) sum += bank.values[r * bank.width + j]! ** 2;
    return sum;
  });
  const squared = b.op('Max', [
    b.op('Add', [
      b.op('Sub', [
        b.sumLastAxis(b.op('Mul', [query, query])),
        b.op('Mul', [
          c(2),
          b.op('MatMul', [query, transposed(b, Array.from(bank.values), bank.rows, bank.width, 'bank')]),
        ]),
      ]),
      b.constant('double', [bank.rows], bankNorms, 'bank_norms'),
    ]),
    c(0),
  ]);
  const nearest = b.node(
    'TopK',
    [squared, b.constant('int64', [1], [BigInt(k)], 'k')],
    { axis: -1, largest: 0, sorted: 1 },
    [b.name('nearest'), b.name('nearest_index')],
  )[0]!;
  return b.op('Div', [b.sumLastAxis(b.op('Sqrt', [nearest])), c(k)]);
}

/** Rows of different lengths as one row-major block, each padded with `fill` to the longest (at least 1). */
function padRows(rows: number[][], fill: (row: number[]) => number): { width: number; values: number[] } {
  const width = Math.max(1, ...rows.map((r) => r.length));
  return { width, values: rows.flatMap((r) => [...r, ...Array<number>(width - r.length).fill(fill(r))]) };
}

/**
 * How many edges lie below x >= 0, per row: `table` [R, W] or [N, R, W] (padded with +Infinity),
 * x [N, R]; returns int64 [N, R]. 'below' counts e < x (locateBin's right-closed bins),
 * 'at-or-below' e <= x (left-closed). Within a relative `tolerance` of an edge counts as on it.
 */
function countEdges(
  b: GraphBuilder,
  table: string,
  x: string,
  rows: number,
  rule: 'below' | 'at-or-below',
  tolerance: number,
): string {
  // x -/+ x tol, not x (1 -/+ tol): onnxruntime's optimiser (its NoopElimination of x * 1) removed a
  // Mul by 1 - 1e-12, a constant that reads as 1 in float32 (measured: the product came back as x)
  const shifted =
    tolerance === 0 ? x : b.op(rule === 'below' ? 'Sub' : 'Add', [x, b.op('Mul', [x, b.scalar('double', tolerance)])]);
  const column = b.op('Reshape', [shifted, b.constant('int64', [3], [0n, BigInt(rows), 1n], 'shape')]);
  const holds = b.op(rule === 'below' ? 'Less' : 'LessOrEqual', [table, column]);
  const count = b.op('ReduceSum', [b.op('Cast', [holds], { to: TO_DOUBLE }), b.constant('int64', [1], [-1n], 'axes')], {
    keepdims: 0,
  });
  return b.op('Cast', [count], { to: TO_INT64 });
}

/** countEdges against per-row edges given as numbers. */
export function binOf(
  b: GraphBuilder,
  x: string,
  edges: number[][],
  rule: 'below' | 'at-or-below',
  tolerance: number,
): string {
  const { width, values } = padRows(edges, () => Infinity);
  return countEdges(b, b.constant('double', [edges.length, width], values, 'edges'), x, edges.length, rule, tolerance);
}

/** values[r][index[n, r]] for int64 index [N, R]: one Gather from the rows laid end to end. */
export function gatherPerRow(
  b: GraphBuilder,
  values: number[][],
  index: string,
  pad: (row: number[]) => number,
): string {
  const { width, values: flat } = padRows(values, pad);
  const offsets = values.map((_, r) => BigInt(r * width));
  const at = b.op('Add', [index, b.constant('int64', [values.length], offsets, 'row_offsets')]);
  return b.op('Gather', [b.constant('double', [flat.length], flat, 'table'), at], { axis: 0 });
}

/** Class c's value of `value(c)` for every class, as a constant [K]. */
export function perClassConstant(b: GraphBuilder, k: number, value: (c: number) => number, what: string): string {
  return b.constant(
    'double',
    [k],
    Array.from({ length: k }, (_, cls) => value(cls)),
    what,
  );
}

/** ln p and ln(1 - p) of p clipped to [1e-12, 1 - 1e-12] (binary-scores.ts), for Platt and beta. */
export function clippedLogs(b: GraphBuilder, p: string): { logP: string; logNotP: string } {
  const clipped = b.clip(p, 'double', SCORE_EPS, 1 - SCORE_EPS);
  return { logP: b.op('Log', [clipped]), logNotP: b.op('Log', [b.op('Sub', [b.scalar('double', 1), clipped])]) };
}

/** Platt's map per class, sigma(a ln(p / (1 - p)) + b), of p [N, K]. */
export function plattMap(b: GraphBuilder, p: string, params: Array<{ a: number; b: number }>, k: number): string {
  const { logP, logNotP } = clippedLogs(b, p);
  const logit = b.op('Sub', [logP, logNotP]);
  return sigmoid(
    b,
    b.op('Add', [
      b.op('Mul', [logit, perClassConstant(b, k, (cls) => params[cls]!.a, 'platt_a')]),
      perClassConstant(b, k, (cls) => params[cls]!.b, 'platt_b'),
    ]),
  );
}

/**
 * A one-vs-rest method (output-calibrator.ts): each class's softmax probability p_c mapped by its
 * own fitted map (`mapped`, of p [N, K], from calibrator-graph-registry.ts), the row renormalised
 * (uniform when every map gives 0), raised to the method's probability floor (probability-floor.ts,
 * 1e-6) as the app's compileCalibrator does, returned as logs.
 */
export function oneVsRestLogProbabilities(
  b: GraphBuilder,
  method: CalibrationMethod | ExtensionMethod,
  z: string,
  k: number,
  mapped: (p: string) => string,
): string {
  const c = (value: number) => b.scalar('double', value);
  const q = mapped(b.softmax(z));
  const kept = b.op('Max', [q, c(0)]);
  const sum = b.sumLastAxis(kept);
  const normalised = b.op('Where', [b.op('Greater', [sum, c(0)]), b.op('Div', [kept, sum]), c(1 / k)]);
  const floored = probabilityFloor(b, normalised, rowProbabilityFloor(probabilityFloorOf(method), k));
  return b.op('Max', [b.op('Log', [floored]), c(LOG_FLOOR)]);
}

/**
 * The app's probability floor (probability-floor.ts floorLogProbabilitiesInto) on a row q [N, K]
 * of probabilities summing to 1, in linear space before the Log: each q_k < eps raised to eps and
 * the others scaled by (1 - m eps) / (the sum of the others), m the number raised; a row with none
 * below eps kept as it is (the app leaves it bit for bit).
 */
function probabilityFloor(b: GraphBuilder, q: string, eps: number): string {
  const c = (value: number) => b.scalar('double', value);
  const below = b.op('Less', [q, c(eps)]);
  const raised = b.sumLastAxis(b.op('Cast', [below], { to: TO_DOUBLE }));
  const others = b.sumLastAxis(b.op('Where', [below, c(0), q]));
  const scale = b.op('Div', [b.op('Sub', [c(1), b.op('Mul', [raised, c(eps)])]), others]);
  const kept = b.op('Where', [b.op('Greater', [raised, c(0)]), b.op('Mul', [q, scale]), q]);
  return b.op('Where', [below, c(eps), kept]);
}

/**
 * Isotonic maps per class (isotonicAt): s clipped to [x_0, x_{m-1}], its segment lo = #{j in
 * 1..m-2: x_j <= s}, then y_lo + (s - x_lo) / (x_lo+1 - x_lo) (y_lo+1 - y_lo). Points are padded past
 * the last with x beyond it and y equal to it, so a one-point map reads y_0.
 */
export function isotonicMap(
  b: GraphBuilder,
  perClass: Array<{ x: number[]; y: number[] }>,
  s: string,
  k: number,
): string {
  const perClassConstant = (value: (f: { x: number[]; y: number[] }) => number, what: string) =>
    b.constant('double', [k], perClass.map(value), what);
  const clipped = b.op('Min', [
    b.op('Max', [s, perClassConstant((f) => f.x[0]!, 'x_first')]),
    perClassConstant((f) => f.x[f.x.length - 1]!, 'x_last'),
  ]);
  const inner = perClass.map((f) => f.x.slice(1, Math.max(1, f.x.length - 1)));
  // exact comparisons: the map is continuous, so no tie can jump
  const lo = binOf(b, clipped, inner, 'at-or-below', 0);
  const hi = b.op('Add', [lo, b.constant('int64', [], [1n], 'one')]);
  // one point past the last: x beyond it (x_last + 1 > any clipped s), y equal to it
  const xs = perClass.map((f) => [...f.x, f.x[f.x.length - 1]! + 1]);
  const ys = perClass.map((f) => [...f.y, f.y[f.y.length - 1]!]);
  const last = (v: number[]) => v[v.length - 1]!;
  const xLo = gatherPerRow(b, xs, lo, last);
  const xHi = gatherPerRow(b, xs, hi, last);
  const yLo = gatherPerRow(b, ys, lo, last);
  const yHi = gatherPerRow(b, ys, hi, last);
  const t = b.op('Div', [b.op('Sub', [clipped, xLo]), b.op('Sub', [xHi, xLo])]);
  return b.op('Add', [yLo, b.op('Mul', [t, b.op('Sub', [yHi, yLo])])]);
}

/**
 * ProCal (proximity-informed-calibration.ts): proximity exp(-mean k-NN distance) picks the row's
 * proximity bin, the top-1 confidence its confidence bin in that bin; the confidence moves by the
 * cell's shift, kept at least at the runner-up's share (times 1 + 1e-9) and 1/K, at most 1; the
 * other probabilities keep their ratios. Returns log-probabilities floored at LOG_FLOOR.
 */
export function procalLogProbabilities(
  b: GraphBuilder,
  spec: Extract<CalibratorSpec, { method: 'procal' }>,
  z: string,
  k: number,
  features: string,
): string {
  const c = (value: number) => b.scalar('double', value);
  const proximity = b.op('Exp', [b.op('Neg', [meanNeighbourDistance(b, features, spec.bank, spec.neighbours)])]);
  const cell = binOf(b, proximity, [spec.proximityEdges], 'below', EDGE_TOLERANCE); // [N, 1]
  const p = b.softmax(z);
  const best = b.op('ArgMax', [z], { axis: -1, keepdims: 1 }); // first index on ties, as topOf
  const isBest = b.op('Equal', [
    b.constant(
      'int64',
      [k],
      Array.from({ length: k }, (_, i) => BigInt(i)),
      'classes',
    ),
    best,
  ]);
  const confidence = b.maxLastAxis(p);
  // the confidence bin within the row's proximity bin: that bin's edges gathered per row [N, 1, W]
  const edges = padRows(spec.confidenceEdges, () => Infinity);
  const rowEdges = b.op(
    'Gather',
    [b.constant('double', [spec.confidenceEdges.length, edges.width], edges.values, 'confidence_edges'), cell],
    {
      axis: 0,
    },
  );
  const confidenceBin = countEdges(b, rowEdges, confidence, 1, 'below', EDGE_TOLERANCE);
  const shifts = padRows(spec.shifts, () => 0);
  const shift = b.op(
    'Gather',
    [
      b.constant('double', [shifts.values.length], shifts.values, 'shifts'),
      b.op('Add', [b.op('Mul', [cell, b.constant('int64', [], [BigInt(shifts.width)], 'width')]), confidenceBin]),
    ],
    { axis: 0 },
  );
  const rest = b.op('Sub', [c(1), confidence]);
  const hasRest = b.op('Greater', [rest, c(0)]);
  const runnerUp = b.maxLastAxis(b.op('Where', [isBest, c(0), p]));
  // share (1 + margin) written as share + share margin: see countEdges on Mul by a factor near 1
  const share = b.op('Div', [runnerUp, b.op('Add', [rest, runnerUp])]);
  const floor = b.op('Where', [hasRest, b.op('Add', [share, b.op('Mul', [share, c(PROCAL_TOP_MARGIN)])]), c(1 / k)]);
  const top = b.op('Min', [c(1), b.op('Max', [b.op('Max', [b.op('Add', [confidence, shift]), floor]), c(1 / k)])]);
  const scale = b.op('Where', [hasRest, b.op('Div', [b.op('Sub', [c(1), top]), rest]), c(0)]);
  const others = b.op('Where', [hasRest, b.op('Mul', [p, scale]), b.op('Div', [b.op('Sub', [c(1), top]), c(k - 1)])]);
  const probabilities = b.op('Where', [isBest, top, others]);
  return b.op('Max', [b.op('Log', [probabilities]), c(LOG_FLOOR)]);
}
