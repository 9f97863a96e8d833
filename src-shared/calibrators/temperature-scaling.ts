import { KnobError } from '../errors';
import { expNonPositive } from '../fusion/exp-non-positive';
import type { LogitArray } from '../fusion/logits';
import type { FitReport } from './fit-report';

/**
 * Temperature scaling (Guo et al. 2017): p = softmax(z / T), T > 0 minimising the NLL on
 * calibration data. The NLL is convex in beta = 1/T, with derivative mean(E_p[z] - z_y) and second
 * derivative mean(Var_p[z]) >= 0, so a safeguarded Newton iteration on beta (bisection inside the
 * bracket the derivative's signs give, doubling while there is no upper end) converges to
 * |step| < 1e-10 beta in a handful of passes. Each pass is one sweep over the logits with one
 * exponential per value: rows are shifted by their maximum once (beta > 0 keeps it the maximum),
 * so every exponent is non-positive and the fast exp applies.
 */
export interface TemperatureParams {
  temperature: number;
}

interface Prepared {
  logits: LogitArray;
  labels: Int32Array;
  k: number;
  rowMax: Float64Array;
}

/** Mean NLL at beta and its first two derivatives in beta, in one pass. */
function nllAndDerivatives(data: Prepared, beta: number): [number, number, number] {
  const { logits, labels, k, rowMax } = data;
  const n = labels.length;
  let nll = 0;
  let d1 = 0;
  let d2 = 0;
  for (let i = 0; i < n; i++) {
    const o = i * k;
    const max = rowMax[i];
    let sum = 0;
    let first = 0;
    let second = 0;
    for (let c = 0; c < k; c++) {
      const d = logits[o + c] - max;
      const e = expNonPositive(beta * d);
      sum += e;
      first += e * d;
      second += e * d * d;
    }
    const mean = first / sum;
    const label = logits[o + labels[i]] - max;
    nll += Math.log(sum) - beta * label;
    d1 += mean - label;
    d2 += second / sum - mean * mean;
  }
  return [nll / n, d1 / n, d2 / n];
}

export function fitTemperature(
  logits: LogitArray,
  labels: Int32Array,
  classCount: number,
): { params: TemperatureParams; report: FitReport } {
  const n = labels.length;
  if (n === 0) throw new KnobError('INVALID_INPUT', 'temperature scaling needs calibration data');
  const k = classCount;
  const rowMax = new Float64Array(n);
  // The derivative at beta -> 0 (uniform p): if positive, the NLL keeps falling as T grows.
  let slopeAtZero = 0;
  for (let i = 0; i < n; i++) {
    let max = -Infinity;
    let sum = 0;
    for (let c = 0; c < k; c++) {
      const z = logits[i * k + c];
      if (z > max) max = z;
      sum += z;
    }
    rowMax[i] = max;
    slopeAtZero += sum / k - logits[i * k + labels[i]];
  }
  const data: Prepared = { logits, labels, k, rowMax };
  if (slopeAtZero / n >= 0) {
    // The labels disagree with the logits' order: the NLL keeps falling as T grows without bound.
    const [nll] = nllAndDerivatives(data, 1e-12);
    return {
      params: { temperature: 1e12 },
      report: { method: 'temperature scaling', objectiveName: 'NLL', objective: nll, iterations: 0, converged: false },
    };
  }
  let lo = 0;
  let hi = Infinity;
  let beta = 1;
  let iterations = 0;
  let converged = false;
  let nll = Number.NaN;
  for (; iterations < 200; iterations++) {
    const [value, d1, d2] = nllAndDerivatives(data, beta);
    nll = value;
    if (d1 > 0) hi = beta;
    else lo = beta;
    let next = d2 > 0 ? beta - d1 / d2 : Number.NaN;
    if (!(next > lo && next < hi)) next = Number.isFinite(hi) ? 0.5 * (lo + hi) : 2 * beta;
    const step = Math.abs(next - beta);
    beta = next;
    if (step <= 1e-10 * beta) {
      // The NLL at the last evaluated beta: it differs from the returned one by O(step^2), below
      // double precision at this step, so no further pass is spent on it.
      converged = true;
      iterations++;
      break;
    }
  }
  return {
    params: { temperature: 1 / beta },
    report: {
      method: 'temperature scaling (Newton on 1/T)',
      objectiveName: 'NLL',
      objective: nll,
      iterations,
      converged,
    },
  };
}

/** Scaled logits z / T (row-major), ready for softmax or any metric that takes logits. */
export function applyTemperature(params: TemperatureParams, logits: LogitArray): Float64Array {
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i] / params.temperature;
  return out;
}
