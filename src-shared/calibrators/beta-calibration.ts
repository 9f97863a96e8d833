import { KnobError } from '../errors';
import { SCORE_EPS, clipScore, fitLogistic, sigmoid } from './binary-scores';
import type { FitReport } from './fit-report';

/**
 * Beta calibration (Kull, Silva Filho & Flach 2017), 'abm': logit mu(s) = a ln s - b ln(1 - s) + c
 * with a, b >= 0. Fitted as a logistic regression on (ln s, -ln(1 - s), 1); a negative coefficient
 * is set to 0 and the fit repeated without it (as betacal does). Reported also as (a, b, m), m the
 * score the map leaves fixed (mu(m) = m).
 */
export interface BetaParams {
  a: number;
  b: number;
  c: number;
  /** The fixed point mu(m) = m in (0, 1); null when the map has none (or is the identity). */
  m: number | null;
}

/** The calibrated score of one score. */
export function betaAt(params: BetaParams, score: number): number {
  const x = clipScore(score);
  return sigmoid(params.a * Math.log(x) - params.b * Math.log(1 - x) + params.c);
}

export function applyBeta(params: BetaParams, scores: Float64Array): Float64Array {
  return scores.map((s) => betaAt(params, s));
}

export function fitBeta(scores: Float64Array, outcomes: ArrayLike<number>): { params: BetaParams; report: FitReport } {
  const n = scores.length;
  if (n === 0) throw new KnobError('INVALID_INPUT', 'beta calibration needs calibration data');
  const targets = Float64Array.from({ length: n }, (_, i) => outcomes[i]);
  const fitWith = (useA: boolean, useB: boolean) => {
    const columns = (useA ? 1 : 0) + (useB ? 1 : 0) + 1;
    const features = new Float64Array(columns * n);
    for (let i = 0; i < n; i++) {
      const s = clipScore(scores[i]);
      let j = 0;
      if (useA) features[i * columns + j++] = Math.log(s);
      if (useB) features[i * columns + j++] = -Math.log(1 - s);
      features[i * columns + j] = 1;
    }
    const fit = fitLogistic(features, columns, targets);
    let j = 0;
    const a = useA ? fit.weights[j++] : 0;
    const b = useB ? fit.weights[j++] : 0;
    return { a, b, c: fit.weights[j], fit };
  };
  let result = fitWith(true, true);
  if (result.a < 0 || result.b < 0) result = fitWith(result.a >= 0, result.b >= 0);
  if (result.a < 0 || result.b < 0) result = fitWith(false, false);
  const params: BetaParams = { a: result.a, b: result.b, c: result.c, m: null };
  // fixed point mu(m) = m by bisection on mu(m) - m (mu is monotone for a, b >= 0)
  let lo = SCORE_EPS;
  let hi = 1 - SCORE_EPS;
  const f = (m: number): number => applyBeta(params, Float64Array.of(m))[0] - m;
  if (f(lo) * f(hi) < 0) {
    for (let i = 0; i < 100; i++) {
      const mid = 0.5 * (lo + hi);
      if (f(lo) * f(mid) <= 0) hi = mid;
      else lo = mid;
    }
    params.m = 0.5 * (lo + hi);
  }
  return {
    params,
    report: {
      method: "beta calibration 'abm' (Newton, a, b >= 0)",
      objectiveName: 'log loss',
      objective: result.fit.loss,
      iterations: result.fit.iterations,
      converged: result.fit.converged,
    },
  };
}
