import { KnobError } from '../errors';
import { fitLogistic, logit, sigmoid } from './binary-scores';
import type { FitReport } from './fit-report';

/**
 * Platt scaling sigma(A logit(s) + B) on binary or top-label scores. Targets: raw labels by default
 * (uncertainty-calibration, Gupta); `smoothedTargets` uses Platt's (N+ + 1)/(N+ + 2) and
 * 1/(N- + 2) as sklearn does.
 */
export interface PlattParams {
  a: number;
  b: number;
}

export function fitPlatt(
  scores: Float64Array,
  outcomes: ArrayLike<number>,
  options: { smoothedTargets?: boolean } = {},
): { params: PlattParams; report: FitReport } {
  const n = scores.length;
  if (n === 0) throw new KnobError('INVALID_INPUT', 'Platt scaling needs calibration data');
  let positives = 0;
  for (let i = 0; i < n; i++) positives += outcomes[i];
  const hi = options.smoothedTargets ? (positives + 1) / (positives + 2) : 1;
  const lo = options.smoothedTargets ? 1 / (n - positives + 2) : 0;
  const features = new Float64Array(2 * n);
  const targets = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    features[2 * i] = logit(scores[i]);
    features[2 * i + 1] = 1;
    targets[i] = outcomes[i] ? hi : lo;
  }
  const fit = fitLogistic(features, 2, targets);
  return {
    params: { a: fit.weights[0], b: fit.weights[1] },
    report: {
      method: `Platt scaling (Newton${options.smoothedTargets ? ', Platt targets' : ''})`,
      objectiveName: 'log loss',
      objective: fit.loss,
      iterations: fit.iterations,
      converged: fit.converged,
    },
  };
}

/** The calibrated score of one score. */
export function plattAt(params: PlattParams, score: number): number {
  return sigmoid(params.a * logit(score) + params.b);
}

export function applyPlatt(params: PlattParams, scores: Float64Array): Float64Array {
  return scores.map((s) => plattAt(params, s));
}
