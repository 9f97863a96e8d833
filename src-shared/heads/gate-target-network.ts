import type { CancelSignal } from '../cancel-signal';
import { sigmoid } from '../calibrators/binary-scores';
import { addScaledInto } from '../calibrators/dot-product';
import { minimizeLbfgs } from '../calibrators/lbfgs';
import { multiplyTransposedInto } from '../calibrators/matrix-products';
import { seededRandom, normalDraw } from '../random';

/**
 * The learned gate target u*(x) of a Knob model fitted on a user's backbone (issue 31), as
 * tools/train/train_knob.py trains the shipped model's: a small MLP on the standardised features
 * (and image statistics, knob-heads.ts),
 *   u = sigmoid(w2 . relu(W1 x + b1) + b2),
 * fitted together with the static branch's log-scale s on
 *   FUSED_WEIGHT CE(y, (1 - u) e^s z_static + u z_dyn) + AUX_WEIGHT BCE(u, [CE(z_dyn) < CE(e^s z_static)])
 *   + (l2 / 2) (||W1||^2 + ||w2||^2),
 * mean over rows, the branches' heads fixed (fitted before, knob-heads.ts). The fused loss teaches u
 * to fall where the dynamic branch errs; the auxiliary target, the oracle advantage, is noisy on
 * corrupted inputs and weighs little, as in the script. L-BFGS from a seeded start (W1 ~ N(0, 1/F),
 * the rest zero): deterministic from the seed.
 */
export const FUSED_WEIGHT = 8;
export const AUX_WEIGHT = 0.25;

export interface GateTargetNetwork {
  /** Row-major [hidden, inputs]. */
  w1: Float64Array;
  b1: Float64Array;
  w2: Float64Array;
  b2: number;
  /** log of the static branch's scale. */
  logStaticScale: number;
}

export interface GateTargetInput {
  /** Standardised features, row-major [rows, width]. */
  x: Float64Array;
  width: number;
  labels: Int32Array;
  /** The heads' logits on the same rows, [rows, k] each (z_static before its scale). */
  zStatic: Float64Array;
  zDyn: Float64Array;
  classCount: number;
}

/** Where each parameter sits in the flat vector: W1 (hidden x width), b1, w2, b2, log s. */
function parameterLayout(hidden: number, width: number) {
  const b1At = hidden * width;
  const w2At = b1At + hidden;
  const b2At = w2At + hidden;
  const logSAt = b2At + 1;
  return { w1At: 0, b1At, w2At, b2At, logSAt, count: logSAt + 1 };
}

/**
 * The objective of the fit over the flat parameter vector (parameterLayout), writing its gradient:
 * what L-BFGS minimises, exported so its gradient can be checked against finite differences.
 */
export function gateTargetLoss(
  input: GateTargetInput,
  hidden: number,
  l2: number,
): (params: Float64Array, gradient: Float64Array) => number {
  const { x, width, labels, zStatic, zDyn, classCount: k } = input;
  const n = labels.length;
  const h = hidden;
  const { w1At, b1At, w2At, b2At, logSAt, count } = parameterLayout(h, width);
  const hiddenValues = new Float64Array(h);
  // every row's W1 x, [rows, hidden], once an evaluation
  const firstLayer = new Float64Array(n * h);
  const fused = new Float64Array(k);
  // each row's CE of the dynamic branch, which no parameter moves: once, not once an evaluation
  const ceDynOfRow = new Float64Array(n);
  for (let i = 0; i < n; i++) ceDynOfRow[i] = crossEntropyOfRow(zDyn, i * k, k, 1, labels[i]!);
  return (params: Float64Array, gradient: Float64Array): number => {
    gradient.fill(0);
    const scale = Math.exp(params[logSAt]);
    let loss = 0;
    multiplyTransposedInto(x, n, width, params.subarray(w1At, b1At), h, firstLayer);
    for (let i = 0; i < n; i++) {
      const o = i * width;
      hiddenActivationsInto(firstLayer, i * h, params, b1At, h, hiddenValues);
      let a = params[b2At];
      for (let j = 0; j < h; j++) a += params[w2At + j] * hiddenValues[j];
      const u = sigmoid(a);
      const y = labels[i];
      const zo = i * k;
      // the fused row and its log-sum-exp; exp(fused - max) kept for the gradient's probabilities
      let max = -Infinity;
      for (let c = 0; c < k; c++) {
        fused[c] = (1 - u) * (scale * zStatic[zo + c]) + u * zDyn[zo + c];
        if (fused[c] > max) max = fused[c];
      }
      let sum = 0;
      for (let c = 0; c < k; c++) {
        fused[c] = Math.exp(fused[c] - max);
        sum += fused[c];
      }
      const lse = max + Math.log(sum);
      const ceStatic = crossEntropyOfRow(zStatic, zo, k, scale, y);
      const target = ceDynOfRow[i] < ceStatic ? 1 : 0;
      const ce = lse - ((1 - u) * (scale * zStatic[zo + y]) + u * zDyn[zo + y]);
      const clipped = Math.min(1 - 1e-12, Math.max(1e-12, u));
      const bce = -(target * Math.log(clipped) + (1 - target) * Math.log(1 - clipped));
      loss += FUSED_WEIGHT * ce + AUX_WEIGHT * bce;
      // dCE/du and dCE/d(log s) through the fused row
      let dCeDu = 0;
      let dCeDlogS = 0;
      const inverseSum = 1 / sum;
      for (let c = 0; c < k; c++) {
        const residual = fused[c] * inverseSum - (c === y ? 1 : 0);
        const s = scale * zStatic[zo + c];
        dCeDu += residual * (zDyn[zo + c] - s);
        dCeDlogS += residual * (1 - u) * s;
      }
      const dA = FUSED_WEIGHT * dCeDu * u * (1 - u) + AUX_WEIGHT * (u - target);
      gradient[logSAt] += FUSED_WEIGHT * dCeDlogS;
      gradient[b2At] += dA;
      for (let j = 0; j < h; j++) {
        gradient[w2At + j] += dA * hiddenValues[j];
        if (hiddenValues[j] <= 0) continue;
        const dz = dA * params[w2At + j];
        gradient[b1At + j] += dz;
        addScaledInto(dz, x, o, gradient, w1At + j * width, width);
      }
    }
    for (let p = 0; p < count; p++) gradient[p] /= n;
    let penalty = 0;
    for (let p = 0; p < h * width; p++) {
      penalty += params[p] * params[p];
      gradient[p] += l2 * params[p];
    }
    for (let j = 0; j < h; j++) {
      penalty += params[w2At + j] ** 2;
      gradient[w2At + j] += l2 * params[w2At + j];
    }
    return loss / n + 0.5 * l2 * penalty;
  };
}

export function fitGateTargetNetwork(
  input: GateTargetInput,
  options: { hidden: number; l2: number; seed: number; maxIterations: number; signal?: CancelSignal },
): { network: GateTargetNetwork; objective: number; iterations: number; converged: boolean } {
  const { width } = input;
  const h = options.hidden;
  const { w1At, b1At, w2At, b2At, logSAt, count } = parameterLayout(h, width);
  const objective = gateTargetLoss(input, h, options.l2);
  const start = new Float64Array(count);
  const random = seededRandom(options.seed);
  for (let p = 0; p < h * width; p++) start[p] = normalDraw(random) / Math.sqrt(width);
  const result = minimizeLbfgs(objective, start, {
    maxIterations: options.maxIterations,
    gradientTolerance: 1e-6,
    signal: options.signal,
  });
  const p = result.x;
  return {
    network: {
      w1: p.slice(w1At, b1At),
      b1: p.slice(b1At, w2At),
      w2: p.slice(w2At, b2At),
      b2: p[b2At],
      logStaticScale: p[logSAt],
    },
    objective: result.value,
    iterations: result.iterations,
    converged: result.converged,
  };
}

/** u*(x) of one standardised row. */
export function gateTargetOf(network: GateTargetNetwork, x: Float64Array, offset: number, width: number): number {
  const h = network.b1.length;
  if (hiddenScratch.length < h) hiddenScratch = new Float64Array(h);
  const hiddenValues = hiddenScratch;
  multiplyTransposedInto(x.subarray(offset, offset + width), 1, width, network.w1, h, hiddenValues);
  hiddenActivationsInto(hiddenValues, 0, network.b1, 0, h, hiddenValues);
  let a = network.b2;
  for (let j = 0; j < h; j++) a += network.w2[j] * hiddenValues[j];
  return sigmoid(a);
}

/** gateTargetOf's hidden layer, reused from row to row. */
let hiddenScratch = new Float64Array(16);

/**
 * relu(W1 x + b1) into `out` from W1 x at `products[at ..)`: W1 x summed over the features in order
 * (multiplyTransposedInto, every row at once in the fit, one row in gateTargetOf), then the bias,
 * so the fit and the fitted network compute u* with the same arithmetic.
 */
function hiddenActivationsInto(
  products: Float64Array,
  at: number,
  b1: Float64Array,
  b1At: number,
  hidden: number,
  out: Float64Array,
): void {
  for (let j = 0; j < hidden; j++) {
    const z = products[at + j]! + b1[b1At + j]!;
    out[j] = z > 0 ? z : 0;
  }
}

/** The cross-entropy of row `at` of `logits` times `scale` against `label`: log-sum-exp less the label's. */
function crossEntropyOfRow(logits: Float64Array, at: number, k: number, scale: number, label: number): number {
  let max = -Infinity;
  for (let c = 0; c < k; c++) if (scale * logits[at + c]! > max) max = scale * logits[at + c]!;
  let sum = 0;
  for (let c = 0; c < k; c++) sum += Math.exp(scale * logits[at + c]! - max);
  return max + Math.log(sum) - scale * logits[at + label]!;
}
