import type { CancelSignal } from '../cancel-signal';
import { featureStandardisation } from '../calibrators/feature-standardisation';
import {
  fitSoftmaxRegression,
  softmaxRegressionScoresInto,
  type SoftmaxRegression,
} from '../calibrators/softmax-regression';
import { KnobError } from '../errors';
import { argmaxRow, logSumExpRow, softmaxRowInto, type LogitArray } from '../fusion/logits';
import { binnedStatistics } from '../metrics/column-statistics';
import { expectedCalibrationError } from '../metrics/calibration-error';
import { EQUAL_WIDTH_15 } from '../metrics/metric-suite';
import { rankOutcomes } from '../metrics/ranked-outcomes';
import { aurocOfTieBlocks } from '../metrics/selective';
import { seededRandom } from '../random';
import { multiplyInto } from '../calibrators/matrix-products';
import { dominantSubspace } from './dominant-subspace';
import { fitGateTargetNetwork, gateTargetOf, type GateTargetNetwork } from './gate-target-network';
import { IMAGE_STATISTICS } from './image-statistics';

/**
 * The Knob heads of a user's backbone (issue 31): on the features of labelled images, clean and
 * corrupted, a conservative static head (softmax regression with label smoothing 0.1 on the
 * corrupted rows), a sensitive dynamic head (softmax regression distilled from the model's own
 * recorded branch, sharpened), and the gate
 * target network with the static scale (gate-target-network.ts), as tools/train/train_knob.py
 * trains the shipped model's streams, its heads here on a fixed backbone. Every head reads the
 * features standardised by the fitting rows' mean and deviation; the gate network reads the image
 * statistics beside them where the recording has them (standardised so too: the script's
 * BatchNorm on them, without its epsilon). Deterministic from the seed, on a
 * stated split: a seeded VALIDATION_FRACTION of the rows is held out for the card.
 */
export const VALIDATION_FRACTION = 0.2;
export const STATIC_LABEL_SMOOTHING = 0.1;
const STATIC_L2 = 1e-3;
const DYNAMIC_L2 = 1e-4;
/**
 * The dynamic head learns the recorded branch sharpened (softmax(z / T), T < 1): the sensitive
 * branch's confident form. 0.6 was the best of {1, 0.6, 0.5, 0.4, 0.25} by the card's held-out AUROC
 * of u* (the fitting half only) on both models of tests/integration/fit-heads.test.ts; at 1 the
 * distilled head is as soft as its teacher and u* barely tells the branches apart (AUROC 0.64, 0.74).
 */
const DISTILLATION_TEMPERATURE = 0.6;
const GATE_L2 = 1e-3;
const GATE_HIDDEN = 16;
/** Features wider than this reach the gate network through GATE_PROJECTED_WIDTH dominant directions. */
export const GATE_FULL_WIDTH = 256;
const GATE_PROJECTED_WIDTH = 128;
/** The heads are fitted on at most this many rows, the gate network on at most GATE_MAX_ROWS (even strides). */
const HEAD_MAX_ROWS = 20_000;
const GATE_MAX_ROWS = 8_000;
/** The fit needs this many clean rows (u* learns what clean looks like) and corrupted ones (the static head's). */
export const MIN_HEAD_ROWS = 100;

export interface HeadsData {
  /** The backbone's features of every row, row-major [rows, width]. */
  features: Float32Array;
  width: number;
  labels: Int32Array;
  /** The corruption severity of each row: 0 is clean. */
  severity: Float64Array;
  classCount: number;
  /**
   * The model's own sensitive branch as it recorded these rows ([rows, classCount] logits: a single
   * classifier's logits, a Knob model's z_dyn): the teacher the dynamic head is distilled from.
   */
  recordedDynamic: LogitArray;
  /**
   * The cheap image statistics of every row (image-statistics.ts), [rows, IMAGE_STATISTICS.length],
   * which the gate target network reads beside the features; null where the recording has none.
   */
  statistics: Float32Array | null;
}

/** Per-column standardisation x = (v - mean) scale: scale is 1 / deviation (0 for a constant column). */
export interface Standardisation {
  mean: Float64Array;
  scale: Float64Array;
}

export interface KnobHeads extends Standardisation {
  staticHead: SoftmaxRegression;
  dynamicHead: SoftmaxRegression;
  /** Reads the standardised features, then (where not null) the standardised image statistics. */
  gate: GateTargetNetwork;
  statistics: Standardisation | null;
}

export interface HeadsFit {
  heads: KnobHeads;
  /** Rows fitted on and held out (indices into the data). */
  train: Int32Array;
  validation: Int32Array;
  /** What each fit did, in words. */
  steps: string[];
}

/** The seeded split of a fit and the standardisation the heads read: what every stage starts from. */
export interface HeadsSplit extends Standardisation {
  /** Rows fitted on and held out (indices into the data, ascending). */
  train: Int32Array;
  validation: Int32Array;
  /** The fitting rows that are clean and corrupted. */
  clean: number[];
  corrupted: number[];
  /** The image statistics' standardisation on the fitting rows; null without statistics. */
  statistics: Standardisation | null;
}

/** One stage of the fit: what it fitted and, in words, how. */
export interface HeadsStage<T> {
  fitted: T;
  step: string;
}

/** A seeded VALIDATION_FRACTION of the rows held out, and the fitting rows' standardisation. */
export function headsSplit(data: HeadsData, seed: number): HeadsSplit {
  const { labels, severity } = data;
  const n = labels.length;
  const random = seededRandom(seed);
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const held = Math.round(n * VALIDATION_FRACTION);
  const validation = Int32Array.from(order.slice(0, held)).sort();
  const train = Int32Array.from(order.slice(held)).sort();
  const clean = Array.from(train).filter((i) => severity[i] === 0);
  const corrupted = Array.from(train).filter((i) => severity[i] > 0);
  if (clean.length < MIN_HEAD_ROWS || corrupted.length < MIN_HEAD_ROWS)
    throw new KnobError(
      'INVALID_INPUT',
      `fitting Knob heads needs ${MIN_HEAD_ROWS} clean and ${MIN_HEAD_ROWS} corrupted labelled frames to fit on; these have ${clean.length} and ${corrupted.length} (record with a corruption schedule that leaves clean segments)`,
    );
  const { mean, scale } = featureStandardisation(data.features, data.width, train);
  // without the epsilon train_knob.py's BatchNorm1d adds to their variances (1e-5): there a learned
  // scale undoes it, here only the weights could, against their L2 penalty. With it the foreign
  // CNN's held-out fall of mean u* was 0.14, without it 0.20 (fit-heads.test.ts, 2026-12-06; the
  // issue asks 0.15).
  const statistics =
    data.statistics === null ? null : featureStandardisation(data.statistics, IMAGE_STATISTICS.length, train);
  return { train, validation, clean, corrupted, mean, scale, statistics };
}

/** Row `row` of a [rows, width] table, standardised, into `out` from `at`. */
function standardisedRowInto(
  values: Float32Array,
  width: number,
  standardisation: Standardisation,
  row: number,
  out: Float64Array,
  at: number,
): void {
  const { mean, scale } = standardisation;
  for (let j = 0; j < width; j++) out[at + j] = (values[row * width + j]! - mean[j]!) * scale[j]!;
}

/** Some rows of a [rows, width] table, standardised: row-major [rows.length, width]. */
function standardisedRows(
  values: Float32Array,
  width: number,
  standardisation: Standardisation,
  rows: readonly number[],
): Float64Array {
  const x = new Float64Array(rows.length * width);
  rows.forEach((row, i) => standardisedRowInto(values, width, standardisation, row, x, i * width));
  return x;
}

/** At most `most` of the rows, at even strides. */
function strided(rows: readonly number[], most: number): number[] {
  const stride = Math.max(1, Math.ceil(rows.length / most));
  return rows.filter((_, i) => i % stride === 0);
}

/**
 * One branch's head: softmax regression on at most HEAD_MAX_ROWS rows (even strides). The static
 * head on the corrupted fitting rows with label smoothing; the dynamic head on every fitting row,
 * clean and corrupted, distilled from the model's recorded sensitive branch sharpened (softmax(z /
 * T); Hinton et al. 2015): it learns what the classifier, trained on clean images, does (its clean
 * accuracy, its confident errors under corruption) from all the rows. Fitted on the labels of a
 * recording's clean rows alone (about a sixth of them), it lost 1.8 points of clean accuracy on a
 * foreign CNN and 1.6 on the shipped backbone (2026-12-05); distilled, 0.4 and 0.6. The two are
 * independent: the parent may fit them on two threads at once.
 */
export function fitBranchHead(
  branch: 'static' | 'dynamic',
  data: HeadsData,
  split: HeadsSplit,
  signal?: CancelSignal,
): HeadsStage<SoftmaxRegression> {
  const { width, labels, classCount: k } = data;
  const picked = strided(branch === 'static' ? split.corrupted : Array.from(split.train), HEAD_MAX_ROWS);
  const fit = fitSoftmaxRegression(
    standardisedRows(data.features, width, split, picked),
    width,
    Int32Array.from(picked, (i) => labels[i]!),
    k,
    {
      ...(branch === 'static'
        ? { l2: STATIC_L2, labelSmoothing: STATIC_LABEL_SMOOTHING }
        : { l2: DYNAMIC_L2, softTargets: distilledTargets(data, picked) }),
      maxIterations: 500,
      gradientTolerance: 1e-5,
      signal,
    },
  );
  const iterations = `${fit.iterations} L-BFGS iterations${fit.converged ? '' : ' (not converged)'}`;
  const step =
    branch === 'static'
      ? `static head: softmax regression on ${picked.length} corrupted frames, label smoothing ${STATIC_LABEL_SMOOTHING}, L2 ${STATIC_L2}, ${iterations}`
      : `dynamic head: softmax regression distilled from the model's recorded dynamic branch (softmax at temperature ${DISTILLATION_TEMPERATURE}) on ${picked.length} frames, clean and corrupted, L2 ${DYNAMIC_L2}, ${iterations}`;
  return { fitted: fit.model, step };
}

/** The dynamic head's targets on `picked`: the recorded sensitive branch at DISTILLATION_TEMPERATURE. */
function distilledTargets(data: HeadsData, picked: readonly number[]): Float64Array {
  const k = data.classCount;
  const teacher = data.recordedDynamic;
  const targets = new Float64Array(picked.length * k);
  const sharpened = new Float64Array(k);
  picked.forEach((r, i) => {
    for (let c = 0; c < k; c++) sharpened[c] = teacher[r * k + c]! / DISTILLATION_TEMPERATURE;
    softmaxRowInto(sharpened, 0, k, targets, i * k);
  });
  return targets;
}

/** The gate target network on the branches' heads (fitted before), on at most GATE_MAX_ROWS rows. */
export function fitGateHead(
  data: HeadsData,
  split: HeadsSplit,
  branches: { staticHead: SoftmaxRegression; dynamicHead: SoftmaxRegression },
  seed: number,
  signal?: CancelSignal,
): HeadsStage<GateTargetNetwork> {
  const { width, labels, classCount: k } = data;
  const gateRows = strided(Array.from(split.train), GATE_MAX_ROWS);
  const x = standardisedRows(data.features, width, split, gateRows);
  const zStatic = new Float64Array(gateRows.length * k);
  const zDyn = new Float64Array(gateRows.length * k);
  const row = new Float64Array(k);
  gateRows.forEach((_, i) => {
    softmaxRegressionScoresInto(branches.staticHead, x, i * width, row);
    zStatic.set(row, i * k);
    softmaxRegressionScoresInto(branches.dynamicHead, x, i * width, row);
    zDyn.set(row, i * k);
  });
  // Wide features: the network reads their dominant directions (its first layer folded back onto
  // the features afterwards, so the model it gives reads them as a narrow one does). Its first
  // layer is most of the fit's cost: 2,048 features took 206 s of 350 (2026-12-06).
  const basis =
    width > GATE_FULL_WIDTH
      ? dominantSubspace(x, gateRows.length, width, GATE_PROJECTED_WIDTH, seededRandom(seed + 1))
      : null;
  const featureWidth = basis === null ? width : GATE_PROJECTED_WIDTH;
  const projected = basis === null ? x : new Float64Array(gateRows.length * featureWidth);
  if (basis !== null) multiplyInto(x, gateRows.length, width, basis, featureWidth, projected);
  const statistics =
    split.statistics === null
      ? null
      : standardisedRows(data.statistics!, IMAGE_STATISTICS.length, split.statistics, gateRows);
  const gateX = statistics === null ? projected : besideEachRow(projected, featureWidth, statistics);
  const gateWidth = featureWidth + (statistics === null ? 0 : IMAGE_STATISTICS.length);
  const gateFit = fitGateTargetNetwork(
    { x: gateX, width: gateWidth, labels: Int32Array.from(gateRows, (i) => labels[i]!), zStatic, zDyn, classCount: k },
    { hidden: GATE_HIDDEN, l2: GATE_L2, seed, maxIterations: 300, signal },
  );
  const gate = basis === null ? gateFit.network : foldedOntoFeatures(gateFit.network, basis, width, gateWidth);
  return {
    fitted: gate,
    step: `gate target network: ${GATE_HIDDEN} hidden ReLU units on the standardised features${basis === null ? '' : ` (their ${featureWidth} dominant directions: randomized range finder, one power iteration)`}${statistics === null ? '' : ` and ${IMAGE_STATISTICS.length} image statistics (${IMAGE_STATISTICS.join(', ')})`}, with the static scale (${Math.exp(gate.logStaticScale).toPrecision(3)}), fitted on ${gateRows.length} frames, ${gateFit.iterations} L-BFGS iterations${gateFit.converged ? '' : ' (not converged)'}`,
  };
}

/** The fit from its stages' results (fitKnobHeads on one thread; the parent's threads). */
export function assembledHeads(
  split: HeadsSplit,
  staticHead: HeadsStage<SoftmaxRegression>,
  dynamicHead: HeadsStage<SoftmaxRegression>,
  gate: HeadsStage<GateTargetNetwork>,
): HeadsFit {
  return {
    heads: {
      mean: split.mean,
      scale: split.scale,
      staticHead: staticHead.fitted,
      dynamicHead: dynamicHead.fitted,
      gate: gate.fitted,
      statistics: split.statistics,
    },
    train: split.train,
    validation: split.validation,
    steps: [staticHead.step, dynamicHead.step, gate.step],
  };
}

/** Every stage on this thread, one after another. */
export function fitKnobHeads(
  data: HeadsData,
  options: { seed: number; signal?: CancelSignal; onProgress?: (stage: string, done: number, total: number) => void },
): HeadsFit {
  const split = headsSplit(data, options.seed);
  options.onProgress?.('static head', 0, 3);
  const staticHead = fitBranchHead('static', data, split, options.signal);
  options.onProgress?.('dynamic head', 1, 3);
  const dynamicHead = fitBranchHead('dynamic', data, split, options.signal);
  options.onProgress?.('gate target network', 2, 3);
  const branches = { staticHead: staticHead.fitted, dynamicHead: dynamicHead.fitted };
  const gate = fitGateHead(data, split, branches, options.seed, options.signal);
  options.onProgress?.('gate target network', 3, 3);
  return assembledHeads(split, staticHead, dynamicHead, gate);
}

/** Each row of `left` ([rows, width]) followed by the same row of `right` ([rows, its width]). */
function besideEachRow(left: Float64Array, width: number, right: Float64Array): Float64Array {
  const rows = left.length / width;
  const rightWidth = right.length / rows;
  const joined = new Float64Array(rows * (width + rightWidth));
  for (let i = 0; i < rows; i++) {
    joined.set(left.subarray(i * width, (i + 1) * width), i * (width + rightWidth));
    joined.set(right.subarray(i * rightWidth, (i + 1) * rightWidth), i * (width + rightWidth) + width);
  }
  return joined;
}

/**
 * The network fitted on projected features x P (P: width x d, orthonormal columns), then any other
 * inputs (the image statistics), as one on the features themselves, then those inputs: W1 P^T in
 * place of the projected block of W1, the rest as it was; the same function of x, and the same L2 norm.
 */
export function foldedOntoFeatures(
  network: GateTargetNetwork,
  basis: Float64Array,
  width: number,
  fittedWidth: number,
): GateTargetNetwork {
  const hidden = network.b1.length;
  const d = basis.length / width;
  const rest = fittedWidth - d;
  const w1 = new Float64Array(hidden * (width + rest));
  for (let j = 0; j < hidden; j++) {
    const row = j * fittedWidth;
    for (let c = 0; c < width; c++) {
      let sum = 0;
      for (let m = 0; m < d; m++) sum += network.w1[row + m]! * basis[c * d + m]!;
      w1[j * (width + rest) + c] = sum;
    }
    w1.set(network.w1.subarray(row + d, row + fittedWidth), j * (width + rest) + width);
  }
  return { ...network, w1 };
}

/** z_static (scaled), z_dyn and u* of the heads on `rows`, [rows, k] and [rows]. */
export function knobHeadOutputs(heads: KnobHeads, data: HeadsData, rows: Int32Array): BranchRows {
  const { width, classCount: k } = data;
  const s = heads.statistics === null ? 0 : IMAGE_STATISTICS.length;
  const x = new Float64Array(width + s);
  const zStatic = new Float64Array(rows.length * k);
  const zDyn = new Float64Array(rows.length * k);
  const u = new Float64Array(rows.length);
  const row = new Float64Array(k);
  const staticScale = Math.exp(heads.gate.logStaticScale);
  rows.forEach((r, i) => {
    standardisedRowInto(data.features, width, heads, r, x, 0);
    if (heads.statistics !== null) standardisedRowInto(data.statistics!, s, heads.statistics, r, x, width);
    softmaxRegressionScoresInto(heads.staticHead, x, 0, row);
    for (let c = 0; c < k; c++) zStatic[i * k + c] = staticScale * row[c]!;
    softmaxRegressionScoresInto(heads.dynamicHead, x, 0, row);
    zDyn.set(row, i * k);
    u[i] = gateTargetOf(heads.gate, x, 0, width + s);
  });
  return { zStatic, zDyn, u };
}

/** The branches and u* of some rows: [rows, k], [rows, k] and [rows]. */
export interface BranchRows {
  zStatic: LogitArray;
  zDyn: LogitArray;
  u: ArrayLike<number>;
}

export interface BranchFigures {
  frames: number;
  accuracyStatic: number;
  accuracyDynamic: number;
  /** The fusion at g = u*: (1 - u*) z_static + u* z_dyn (the gate at rest on its target). */
  accuracyFused: number;
  /** ECE of the fused output (top-label, 15 equal-width bins, L1). */
  eceFused: number;
  /** AUROC of u* for the oracle advantage (the dynamic branch's CE below the static one's); null when one-sided. */
  aurocOracleAdvantage: number | null;
  meanUClean: number | null;
  meanUCorrupted: number | null;
}

/** What the card shows of branches on labelled rows with their severities. */
export function branchFigures(
  branches: BranchRows,
  labels: ArrayLike<number>,
  severity: ArrayLike<number>,
  k: number,
): BranchFigures {
  const n = labels.length;
  let rightS = 0;
  let rightD = 0;
  let rightF = 0;
  const confidence = new Float64Array(n);
  const correct = new Uint8Array(n);
  const advantage = new Uint8Array(n);
  let cleanSum = 0;
  let cleanCount = 0;
  let corruptedSum = 0;
  let corruptedCount = 0;
  const fused = new Float64Array(k);
  const ce = (z: LogitArray, o: number, y: number) => logSumExpRow(z, o, k) - z[o + y]!;
  const top = (z: LogitArray, o: number) => argmaxRow(z, o, k);
  for (let i = 0; i < n; i++) {
    const o = i * k;
    const y = labels[i]!;
    const u = branches.u[i]!;
    for (let c = 0; c < k; c++) fused[c] = (1 - u) * branches.zStatic[o + c]! + u * branches.zDyn[o + c]!;
    if (top(branches.zStatic, o) === y) rightS++;
    if (top(branches.zDyn, o) === y) rightD++;
    const best = top(fused, 0);
    correct[i] = best === y ? 1 : 0;
    rightF += correct[i]!;
    confidence[i] = Math.exp(-ce(fused, 0, best));
    advantage[i] = ce(branches.zDyn, o, y) < ce(branches.zStatic, o, y) ? 1 : 0;
    if (severity[i] === 0) {
      cleanSum += u;
      cleanCount++;
    } else {
      corruptedSum += u;
      corruptedCount++;
    }
  }
  const ranked = rankOutcomes(Float64Array.from(branches.u), advantage);
  const auroc = aurocOfTieBlocks(ranked.positives, ranked.negatives, ranked.blockCount);
  return {
    frames: n,
    accuracyStatic: rightS / n,
    accuracyDynamic: rightD / n,
    accuracyFused: rightF / n,
    eceFused: expectedCalibrationError(binnedStatistics(confidence, correct, EQUAL_WIDTH_15)),
    aurocOracleAdvantage: auroc === null ? null : auroc.value,
    meanUClean: cleanCount === 0 ? null : cleanSum / cleanCount,
    meanUCorrupted: corruptedCount === 0 ? null : corruptedSum / corruptedCount,
  };
}
