import type { CancelSignal } from '../cancel-signal';
import { KnobError } from '../errors';
import { minimizeLbfgs } from './lbfgs';
import { addTransposedRowsProductInto, multiplyTransposedInto } from './matrix-products';

/**
 * Multinomial logistic regression (softmax regression): scores_c = b_c + sum_j W_cj x_j, p =
 * softmax(scores), fitted by L-BFGS from zero on
 *   mean_i CE(t_i, p_i) + (lambda / 2) ||W||^2     (the intercepts b not penalised),
 * t_i the one-hot label, with label smoothing epsilon (1 - epsilon) one-hot + epsilon / C, or a given
 * probability row (soft targets: a teacher's softmax, which this model distils; Hinton et al. 2015).
 * scikit-learn's LogisticRegression(C, multinomial, lbfgs) minimises C sum_i CE_i + ||W||^2 / 2, the
 * same objective times C n at lambda = 1 / (C n) (tests/fixtures/softmax-regression: its reference).
 * The condition detector (condition-detector.ts) and the Knob heads fitted on a user's backbone
 * (issue 31) are this model. Deterministic: no randomness; the start is zero.
 */
export interface SoftmaxRegression {
  /** Row-major [classes, inputs]. */
  weights: Float64Array;
  bias: Float64Array;
  classCount: number;
  inputWidth: number;
}

export interface SoftmaxRegressionFit {
  model: SoftmaxRegression;
  /** The objective at the optimum (mean cross-entropy plus the penalty). */
  objective: number;
  iterations: number;
  converged: boolean;
}

export interface SoftmaxRegressionOptions {
  /** lambda, the L2 penalty on the weights (per row of data: the objective is a mean). */
  l2: number;
  /** epsilon in [0, 1): the label smoothing. */
  labelSmoothing?: number;
  /**
   * Soft targets in place of the labels' one-hot rows: [rows, classes], each row a probability
   * vector (no label smoothing with them). The labels are still checked.
   */
  softTargets?: Float64Array;
  maxIterations?: number;
  /** L-BFGS stops when |gradient| <= this x max(1, |parameters|). */
  gradientTolerance?: number;
  signal?: CancelSignal;
}

/** Fits on `rows` rows of `width` inputs (`inputs` row-major) with labels in 0..classCount-1. */
export function fitSoftmaxRegression(
  inputs: Float64Array,
  width: number,
  labels: Int32Array,
  classCount: number,
  options: SoftmaxRegressionOptions,
): SoftmaxRegressionFit {
  const n = labels.length;
  const c = classCount;
  const smoothing = options.labelSmoothing ?? 0;
  if (inputs.length !== n * width)
    throw new KnobError('INVALID_INPUT', `${inputs.length} inputs do not make ${n} rows of ${width}`);
  if (!(options.l2 >= 0) || !(smoothing >= 0 && smoothing < 1))
    throw new KnobError('INVALID_INPUT', 'softmax regression needs l2 >= 0 and label smoothing in [0, 1)');
  const soft = options.softTargets;
  if (soft !== undefined && (soft.length !== n * c || smoothing !== 0))
    throw new KnobError(
      'INVALID_INPUT',
      `soft targets must be ${n} rows of ${c} probabilities (got ${soft.length} values), without label smoothing`,
    );
  if (soft !== undefined)
    for (let i = 0; i < n; i++) {
      let sum = 0;
      for (let k = 0; k < c; k++) {
        const t = soft[i * c + k]!;
        if (!(t >= 0)) throw new KnobError('INVALID_INPUT', `soft target ${t} of row ${i} is not a probability`);
        sum += t;
      }
      if (Math.abs(sum - 1) > 1e-6)
        throw new KnobError('INVALID_INPUT', `soft targets of row ${i} sum to ${sum}, not 1`);
    }
  for (const y of labels)
    if (!(y >= 0 && y < c)) throw new KnobError('INVALID_INPUT', `label ${y} is outside 0..${c - 1}`);
  const weightCount = c * width;
  // every row's scores, then (in place) its residuals p - t: [rows, classes], once a fit
  const rowScores = new Float64Array(n * c);
  const objective = (params: Float64Array, gradient: Float64Array): number => {
    gradient.fill(0);
    // W x for every row at once (the weights are the first c x width parameters), then the bias:
    // the order of softmaxRegressionScoresInto and the step graph's MatMul then Add
    multiplyTransposedInto(inputs, n, width, params, c, rowScores);
    let loss = 0;
    for (let i = 0; i < n; i++) {
      const o = i * c;
      let max = -Infinity;
      for (let k = 0; k < c; k++) {
        const s = rowScores[o + k] + params[weightCount + k];
        rowScores[o + k] = s;
        if (s > max) max = s;
      }
      let sum = 0;
      for (let k = 0; k < c; k++) sum += Math.exp(rowScores[o + k] - max);
      const logSum = max + Math.log(sum);
      const y = labels[i];
      for (let k = 0; k < c; k++) {
        const target = soft !== undefined ? soft[o + k] : (k === y ? 1 - smoothing : 0) + smoothing / c;
        const score = rowScores[o + k];
        if (target > 0) loss -= target * (score - logSum);
        const residual = Math.exp(score - logSum) - target;
        rowScores[o + k] = residual;
        gradient[weightCount + k] += residual;
      }
    }
    addTransposedRowsProductInto(rowScores, c, inputs, n, width, gradient);
    let penalty = 0;
    for (let p = 0; p < gradient.length; p++) gradient[p] /= n;
    for (let p = 0; p < weightCount; p++) {
      penalty += params[p] * params[p];
      gradient[p] += options.l2 * params[p];
    }
    return loss / n + 0.5 * options.l2 * penalty;
  };
  const result = minimizeLbfgs(objective, new Float64Array(weightCount + c), {
    maxIterations: options.maxIterations ?? 500,
    gradientTolerance: options.gradientTolerance ?? 1e-6,
    signal: options.signal,
  });
  return {
    model: {
      weights: result.x.slice(0, weightCount),
      bias: result.x.slice(weightCount),
      classCount: c,
      inputWidth: width,
    },
    objective: result.value,
    iterations: result.iterations,
    converged: result.converged,
  };
}

/** The scores b + W x of one row `x[offset ..)` into `out` (no softmax: the logits). */
export function softmaxRegressionScoresInto(
  model: SoftmaxRegression,
  x: ArrayLike<number>,
  offset: number,
  out: Float64Array,
): void {
  const { weights, bias, classCount, inputWidth } = model;
  for (let k = 0; k < classCount; k++) {
    // the weighted sum, then the bias: the order of the step graph's MatMul then Add
    let s = 0;
    for (let j = 0; j < inputWidth; j++) s += weights[k * inputWidth + j] * x[offset + j];
    out[k] = s + bias[k];
  }
}
