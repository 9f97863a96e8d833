import { stopIfCancelled, type CancelSignal } from '../cancel-signal';
import { softmaxRowInto, type LogitArray } from '../fusion/logits';
import { solveSymmetric } from './binary-scores';

/**
 * Matrix scaling softmax(W x + b) fitted by Newton's method with the exact Hessian, as the
 * Dirichlet calibration authors' own code fits its full map (Kull et al. 2019, dirichletcal's
 * Newton update), where L-BFGS has not converged within its first iterations
 * (affine-logit-scaling.ts). Why: on ln p (Dirichlet calibration) the inputs' columns share
 * -log sum exp z and span tens of nats, and L-BFGS needed 850 to 3,300 iterations to meet its
 * tolerance on the shipped model's 2,000-frame trace (it stopped at its cap of 500, "did not
 * converge", after about 0.5 s a fit, and the cross-validation compares 12 such fits); Newton's
 * method is unaffected by that conditioning: 7 to 14 steps from the identity, 4 from where 100
 * L-BFGS iterations got.
 *
 * Inside, the parameters are the rows of [W | b] (K x (K + 1)); the objective is the mean NLL
 * plus a penalty sum_j (weight_j / 2) (theta_j - centre_j)^2. The NLL's Hessian is
 * (1 / n) sum_i (diag p_i - p_i p_i^T) (x) x_i x_i^T with x_i = (z_i, 1). The NLL is flat along
 * "add u to every row of W" and "add c to every bias"; a penalty with positive weight somewhere in
 * every column of W and on the biases (`newtonApplies`) curves those directions, so the objective
 * is strictly convex and its minimiser the one L-BFGS's gauge-fixed fit approaches. (ODIR leaves
 * the diagonal to the data: with a softmax saturated to rounding the Hessian can still be singular
 * in floating point; the fit then stops unconverged and the caller goes on with L-BFGS.)
 * Cost a step: n K (K + 1)^3 / 4 multiply-adds for the Hessian and (K (K + 1))^3 / 3 to solve
 * with it, affordable for few classes and rows (NEWTON_MAX_WORK: up to about 3,470 rows at 10
 * classes, 250,000 at 3; nothing past 17 classes); L-BFGS alone fits the rest.
 */

/** Work a step (multiply-adds: the Hessian and its solve) above which L-BFGS fits instead. */
const NEWTON_MAX_WORK = 1.2e7;
/** Steps at most; a converging fit takes 7 to 14 (Dirichlet on the shipped model's trace). */
const MAX_STEPS = 100;
/** Converged: the gradient's norm at most this times max(1, |theta|) (L-BFGS: 1e-8). */
const GRADIENT_TOLERANCE = 1e-9;
/** Armijo's sufficient decrease: a step must win this share of what the quadratic model predicts. */
const SUFFICIENT_DECREASE = 1e-4;
/** Halvings of a step before the line search gives up. */
const MAX_HALVINGS = 50;
/** A predicted decrease at most this (relative to the objective) is rounding: converged. */
const ROUNDING_DECREASE = 1e-20;

/** A quadratic penalty per parameter, in the parameters' order (W row-major, then b). */
export interface AffinePenalty {
  weights: Float64Array;
  centres: Float64Array;
}

export interface NewtonFit {
  /** K x K row-major, and K biases. */
  weights: Float64Array;
  bias: Float64Array;
  value: number;
  iterations: number;
  converged: boolean;
}

/** Index in the parameters' order (W row-major, then b) of [W | b]'s entry (r, c). */
const parameterIndex = (r: number, c: number, k: number): number => (c < k ? r * k + c : k * k + r);

/** Whether Newton's method fits this problem: strictly convex with this penalty, and affordable. */
export function newtonApplies(rows: number, classCount: number, penalty: AffinePenalty): boolean {
  const k = classCount;
  const width = k + 1;
  const size = k * width;
  if (k < 2 || (rows * k * width * width * width) / 4 + (size * size * size) / 3 > NEWTON_MAX_WORK) return false;
  for (let c = 0; c <= k; c++) {
    let pinned = false;
    for (let r = 0; r < k && !pinned; r++) pinned = penalty.weights[parameterIndex(r, c, k)]! > 0;
    if (!pinned) return false;
  }
  return true;
}

/**
 * Minimises the mean NLL of softmax(W x_i + b) against labels plus the penalty, from `start` or
 * W = I, b = 0, by damped Newton steps (Armijo backtracking). `signal` is read once a step.
 */
export function fitAffineByNewton(
  inputs: LogitArray,
  labels: Int32Array,
  classCount: number,
  penalty: AffinePenalty,
  signal?: CancelSignal,
  /** Where to start (W and b), else W = I, b = 0. */
  start?: { weights: Float64Array; bias: Float64Array },
): NewtonFit {
  const k = classCount;
  const width = k + 1;
  const size = k * width;
  const theta = new Float64Array(size);
  // the penalty in [W | b]'s row layout, as theta
  const rowPenalty: AffinePenalty = { weights: new Float64Array(size), centres: new Float64Array(size) };
  for (let r = 0; r < k; r++)
    for (let c = 0; c <= k; c++) {
      const from = parameterIndex(r, c, k);
      rowPenalty.weights[r * width + c] = penalty.weights[from]!;
      rowPenalty.centres[r * width + c] = penalty.centres[from]!;
      if (start) theta[r * width + c] = c < k ? start.weights[from]! : start.bias[r]!;
      else theta[r * width + c] = c === r ? 1 : 0;
    }
  const gradient = new Float64Array(size);
  const hessian = new Float64Array(size * size);
  const trial = new Float64Array(size);
  const scratch = { p: new Float64Array(k), outer: new Float64Array(width * width) };
  let value = objectiveAt(theta, inputs, labels, k, rowPenalty, gradient, scratch);
  let iterations = 0;
  for (; iterations < MAX_STEPS; iterations++) {
    stopIfCancelled(signal, 'the fit was cancelled');
    let gradientNorm = 0;
    let thetaNorm = 0;
    for (let j = 0; j < size; j++) {
      gradientNorm += gradient[j]! * gradient[j]!;
      thetaNorm += theta[j]! * theta[j]!;
    }
    if (Math.sqrt(gradientNorm) <= GRADIENT_TOLERANCE * Math.max(1, Math.sqrt(thetaNorm)))
      return { ...split(theta, k), value, iterations, converged: true };
    hessianAt(theta, inputs, k, rowPenalty, hessian, scratch);
    const step = solveSymmetric(hessian, gradient, size);
    let decrement = 0;
    for (let j = 0; j < size; j++) decrement += gradient[j]! * step[j]!;
    if (!(decrement > 0)) break; // not a descent direction: the Hessian lost definiteness to rounding
    let scale = 1;
    let trialValue = Infinity;
    for (let halvings = 0; halvings < MAX_HALVINGS; halvings++) {
      for (let j = 0; j < size; j++) trial[j] = theta[j]! - scale * step[j]!;
      trialValue = objectiveAt(trial, inputs, labels, k, rowPenalty, null, scratch);
      if (trialValue <= value - SUFFICIENT_DECREASE * scale * decrement) break;
      scale /= 2;
    }
    if (!(trialValue < value)) {
      // no decrease left at rounding level: converged if the step was already that small
      return {
        ...split(theta, k),
        value,
        iterations,
        converged: decrement <= ROUNDING_DECREASE * Math.max(1, Math.abs(value)),
      };
    }
    theta.set(trial);
    value = objectiveAt(theta, inputs, labels, k, rowPenalty, gradient, scratch);
  }
  return { ...split(theta, k), value, iterations, converged: false };
}

/** W (K x K) and b from the [W | b] rows. */
function split(theta: Float64Array, k: number): { weights: Float64Array; bias: Float64Array } {
  const width = k + 1;
  const weights = new Float64Array(k * k);
  const bias = new Float64Array(k);
  for (let r = 0; r < k; r++) {
    for (let c = 0; c < k; c++) weights[r * k + c] = theta[r * width + c]!;
    bias[r] = theta[r * width + k]!;
  }
  return { weights, bias };
}

/** softmax(W x + b) of row `offset` of inputs into p; returns log sum exp minus the label's score. */
function probabilitiesInto(
  theta: Float64Array,
  inputs: LogitArray,
  offset: number,
  label: number,
  k: number,
  p: Float64Array,
): number {
  const width = k + 1;
  for (let r = 0; r < k; r++) {
    let v = theta[r * width + k]!;
    for (let c = 0; c < k; c++) v += theta[r * width + c]! * inputs[offset + c]!;
    p[r] = v;
  }
  const labelScore = p[label]!;
  return softmaxRowInto(p, 0, k, p, 0) - labelScore;
}

/** The objective at theta, and its gradient into `gradient` when given. */
function objectiveAt(
  theta: Float64Array,
  inputs: LogitArray,
  labels: Int32Array,
  k: number,
  penalty: AffinePenalty,
  gradient: Float64Array | null,
  scratch: { p: Float64Array; outer: Float64Array },
): number {
  const width = k + 1;
  const size = k * width;
  const n = labels.length;
  const { p } = scratch;
  gradient?.fill(0);
  let nll = 0;
  for (let i = 0; i < n; i++) {
    const o = i * k;
    const label = labels[i]!;
    nll += probabilitiesInto(theta, inputs, o, label, k, p);
    if (gradient === null) continue;
    for (let r = 0; r < k; r++) {
      // d(-log p_y)/d(W_r x) = p_r - 1[r = y]
      const residual = p[r]! - (label === r ? 1 : 0);
      const at = r * width;
      for (let c = 0; c < k; c++) gradient[at + c]! += residual * inputs[o + c]!;
      gradient[at + k]! += residual;
    }
  }
  let value = nll / n;
  for (let j = 0; j < size; j++) {
    const deviation = theta[j]! - penalty.centres[j]!;
    value += (penalty.weights[j]! / 2) * deviation * deviation;
    if (gradient !== null) gradient[j] = gradient[j]! / n + penalty.weights[j]! * deviation;
  }
  return value;
}

/**
 * The objective's Hessian at theta (row-major, size x size, parameter (r, a) at r (K + 1) + a):
 * (1 / n) sum_i (diag p_i - p_i p_i^T) (x) x_i x_i^T plus the penalty's weights.
 */
function hessianAt(
  theta: Float64Array,
  inputs: LogitArray,
  k: number,
  penalty: AffinePenalty,
  hessian: Float64Array,
  scratch: { p: Float64Array; outer: Float64Array },
): void {
  const width = k + 1;
  const size = k * width;
  const { p, outer } = scratch;
  hessian.fill(0);
  const n = inputs.length / k;
  for (let o = 0; o < inputs.length; o += k) {
    probabilitiesInto(theta, inputs, o, 0, k, p);
    for (let a = 0; a < width; a++) {
      const xa = a < k ? inputs[o + a]! : 1;
      for (let b = a; b < width; b++) outer[a * width + b] = xa * (b < k ? inputs[o + b]! : 1);
    }
    // block (r, s) += (p_r [r = s] - p_r p_s) x x^T, for s >= r and within it b >= a (x x^T is
    // symmetric): the rest by symmetry below
    for (let r = 0; r < k; r++) {
      for (let s = r; s < k; s++) {
        const curvature = (r === s ? p[r]! : 0) - p[r]! * p[s]!;
        for (let a = 0; a < width; a++) {
          const row = (r * width + a) * size + s * width;
          const from = a * width;
          for (let b = a; b < width; b++) hessian[row + b]! += curvature * outer[from + b]!;
        }
      }
    }
  }
  // the upper triangles of the blocks s >= r computed above: scaled, mirrored within each block
  // (a symmetric multiple of x x^T), then each block (r, s) mirrored to (s, r)
  for (let r = 0; r < k; r++)
    for (let s = r; s < k; s++)
      for (let a = 0; a < width; a++)
        for (let b = a; b < width; b++) {
          const value = hessian[(r * width + a) * size + s * width + b]! / n;
          hessian[(r * width + a) * size + s * width + b] = value;
          hessian[(r * width + b) * size + s * width + a] = value;
          hessian[(s * width + b) * size + r * width + a] = value;
          hessian[(s * width + a) * size + r * width + b] = value;
        }
  for (let j = 0; j < size; j++) hessian[j * size + j]! += penalty.weights[j]!;
}
