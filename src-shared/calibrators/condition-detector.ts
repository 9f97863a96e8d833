import type { CancelSignal } from '../cancel-signal';
import { minimizeLbfgs } from './lbfgs';

/**
 * The condition detector of the condition-aware calibrator (conditional-calibration.ts): which
 * condition (a corruption, a camera, a time-of-day segment) a frame was taken under, read from the
 * model's features of that frame alone. A multinomial logistic regression on standardised features,
 *   x_j = (f_j - mean_j) scale_j,   score_c = bias_c + sum_j W_cj x_j,   condition = argmax_c score_c
 * (the first maximum), fitted by L-BFGS on the mean cross-entropy plus (lambda / 2) ||W||^2 (the
 * biases are not penalised), lambda = DETECTOR_L2. Linear, so the step graph computes it with
 * MatMul, Add and ArgMax (calibrator-graph-registry.ts) and reads the same condition.
 */
export interface ConditionDetector {
  /** Per feature: the fitting rows' mean and 1 / standard deviation (0 for a constant feature). */
  mean: number[];
  scale: number[];
  /** Row-major [conditions, features]. */
  weights: number[];
  bias: number[];
}

/** The L2 penalty on the weights of standardised features (a mild one: the features are many). */
export const DETECTOR_L2 = 1e-3;
/** The detector is fitted on at most this many rows (an even stride through the rest). */
export const DETECTOR_MAX_ROWS = 20_000;

/**
 * Fits the detector on `rows` rows of `width` features each, with their condition codes in
 * 0..conditionCount-1 (every condition present). Deterministic: the optimiser starts from zero.
 */
export function fitConditionDetector(
  features: Float32Array,
  width: number,
  codes: Int32Array,
  conditionCount: number,
  signal?: CancelSignal,
): { detector: ConditionDetector; crossEntropy: number; iterations: number; converged: boolean } {
  const stride = Math.max(1, Math.ceil(codes.length / DETECTOR_MAX_ROWS));
  const picked: number[] = [];
  for (let i = 0; i < codes.length; i += stride) picked.push(i);
  const n = picked.length;
  const mean = new Float64Array(width);
  const sd = new Float64Array(width);
  for (const row of picked) for (let j = 0; j < width; j++) mean[j] += features[row * width + j];
  for (let j = 0; j < width; j++) mean[j] /= n;
  for (const row of picked) for (let j = 0; j < width; j++) sd[j] += (features[row * width + j] - mean[j]) ** 2;
  const scale = Array.from(sd, (s) => {
    const deviation = Math.sqrt(s / n);
    return deviation > 1e-12 ? 1 / deviation : 0;
  });
  const x = new Float64Array(n * width);
  const y = new Int32Array(n);
  picked.forEach((row, i) => {
    for (let j = 0; j < width; j++) x[i * width + j] = (features[row * width + j] - mean[j]) * scale[j];
    y[i] = codes[row];
  });
  const c = conditionCount;
  const weightCount = c * width;
  const scores = new Float64Array(c);
  // parameters: W (c x width, row-major), then the c biases
  const objective = (params: Float64Array, gradient: Float64Array): number => {
    gradient.fill(0);
    let loss = 0;
    for (let i = 0; i < n; i++) {
      const o = i * width;
      let max = -Infinity;
      for (let k = 0; k < c; k++) {
        let s = params[weightCount + k];
        for (let j = 0; j < width; j++) s += params[k * width + j] * x[o + j];
        scores[k] = s;
        if (s > max) max = s;
      }
      let sum = 0;
      for (let k = 0; k < c; k++) {
        scores[k] = Math.exp(scores[k] - max);
        sum += scores[k];
      }
      loss += Math.log(sum) + max - (Math.log(scores[y[i]]) + max);
      for (let k = 0; k < c; k++) {
        const residual = scores[k] / sum - (k === y[i] ? 1 : 0);
        gradient[weightCount + k] += residual;
        for (let j = 0; j < width; j++) gradient[k * width + j] += residual * x[o + j];
      }
    }
    let penalty = 0;
    for (let p = 0; p < gradient.length; p++) gradient[p] /= n;
    for (let p = 0; p < weightCount; p++) {
      penalty += params[p] * params[p];
      gradient[p] += DETECTOR_L2 * params[p];
    }
    return loss / n + 0.5 * DETECTOR_L2 * penalty;
  };
  const result = minimizeLbfgs(objective, new Float64Array(weightCount + c), {
    maxIterations: 300,
    gradientTolerance: 1e-5,
    signal,
  });
  return {
    detector: {
      mean: Array.from(mean),
      scale,
      weights: Array.from(result.x.subarray(0, weightCount)),
      bias: Array.from(result.x.subarray(weightCount)),
    },
    crossEntropy: result.value,
    iterations: result.iterations,
    converged: result.converged,
  };
}

/** A detector made ready to apply: typed arrays, so reading a frame's condition allocates nothing. */
export interface CompiledDetector {
  width: number;
  conditionOf(features: Float32Array, offset: number): number;
}

export function compileConditionDetector(detector: ConditionDetector): CompiledDetector {
  const width = detector.mean.length;
  const c = detector.bias.length;
  const mean = Float64Array.from(detector.mean);
  const scale = Float64Array.from(detector.scale);
  const weights = Float64Array.from(detector.weights);
  const standardised = new Float64Array(width);
  return {
    width,
    conditionOf(features, offset) {
      for (let j = 0; j < width; j++) standardised[j] = (features[offset + j] - mean[j]) * scale[j];
      let best = 0;
      let bestScore = -Infinity;
      for (let k = 0; k < c; k++) {
        // the same order of sums as the step graph's MatMul then Add: the weighted sum, then the bias
        let s = 0;
        for (let j = 0; j < width; j++) s += weights[k * width + j] * standardised[j];
        s += detector.bias[k];
        if (s > bestScore) {
          bestScore = s;
          best = k;
        }
      }
      return best;
    },
  };
}
