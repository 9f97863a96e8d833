import type { CancelSignal } from '../cancel-signal';
import { featureStandardisation } from './feature-standardisation';
import { fitSoftmaxRegression, softmaxRegressionScoresInto } from './softmax-regression';

/**
 * The condition detector of the condition-aware calibrator (conditional-calibration.ts): which
 * condition (a corruption, a camera, a time-of-day segment) a frame was taken under, read from the
 * model's features of that frame alone. A multinomial logistic regression on standardised features,
 *   x_j = (f_j - mean_j) scale_j,   score_c = bias_c + sum_j W_cj x_j,   condition = argmax_c score_c
 * (the first maximum), a softmax regression (softmax-regression.ts) with lambda = DETECTOR_L2. Linear, so the step graph computes it with
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
/** The detector is fitted on at most this many rows, shared out among the conditions. */
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
  // at most DETECTOR_MAX_ROWS rows, shared out among the conditions (an even stride within each):
  // one stride over all rows could leave a small condition with hardly a row
  const byCondition = Array.from({ length: conditionCount }, () => [] as number[]);
  codes.forEach((code, i) => byCondition[code]?.push(i));
  const share = Math.ceil(DETECTOR_MAX_ROWS / conditionCount);
  const picked = byCondition
    .flatMap((rows) => {
      const stride = Math.max(1, Math.ceil(rows.length / share));
      return rows.filter((_, i) => i % stride === 0);
    })
    .sort((a, b) => a - b);
  const n = picked.length;
  const { mean, scale } = featureStandardisation(features, width, picked);
  const x = new Float64Array(n * width);
  const y = new Int32Array(n);
  picked.forEach((row, i) => {
    for (let j = 0; j < width; j++) x[i * width + j] = (features[row * width + j] - mean[j]) * scale[j];
    y[i] = codes[row];
  });
  const fit = fitSoftmaxRegression(x, width, y, conditionCount, {
    l2: DETECTOR_L2,
    maxIterations: 300,
    gradientTolerance: 1e-5,
    signal,
  });
  return {
    detector: {
      mean: Array.from(mean),
      scale: Array.from(scale),
      weights: Array.from(fit.model.weights),
      bias: Array.from(fit.model.bias),
    },
    crossEntropy: fit.objective,
    iterations: fit.iterations,
    converged: fit.converged,
  };
}

/** A detector made ready to apply: typed arrays, so reading a frame's condition allocates nothing. */
export interface CompiledDetector {
  width: number;
  conditionOf(features: Float32Array, offset: number): number;
}

export function compileConditionDetector(detector: ConditionDetector): CompiledDetector {
  const width = detector.mean.length;
  const model = {
    weights: Float64Array.from(detector.weights),
    bias: Float64Array.from(detector.bias),
    classCount: detector.bias.length,
    inputWidth: width,
  };
  const mean = Float64Array.from(detector.mean);
  const scale = Float64Array.from(detector.scale);
  const standardised = new Float64Array(width);
  const scores = new Float64Array(model.classCount);
  return {
    width,
    conditionOf(features, offset) {
      for (let j = 0; j < width; j++) standardised[j] = (features[offset + j] - mean[j]) * scale[j];
      softmaxRegressionScoresInto(model, standardised, 0, scores);
      let best = 0;
      for (let k = 1; k < scores.length; k++) if (scores[k] > scores[best]) best = k; // the first maximum
      return best;
    },
  };
}
