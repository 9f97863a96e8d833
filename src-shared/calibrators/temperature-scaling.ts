import { KnobError } from '../errors';
import { logSumExpRow, type LogitArray } from '../fusion/logits';
import type { FitReport } from './fit-report';

/**
 * Temperature scaling (Guo et al. 2017): p = softmax(z / T), T > 0 minimising the NLL on
 * calibration data. The NLL is convex in beta = 1/T, with derivative mean(E_p[z] - z_y) and second
 * derivative mean(Var_p[z]) >= 0, so a safeguarded Newton iteration on beta (bisection fallback
 * inside a bracket) converges to |step| < 1e-10 beta.
 */
export interface TemperatureParams {
  temperature: number;
}

function nllAndDerivatives(
  logits: LogitArray,
  labels: Int32Array,
  k: number,
  beta: number,
  scratch: Float64Array,
): [number, number, number] {
  const n = labels.length;
  let nll = 0;
  let d1 = 0;
  let d2 = 0;
  for (let i = 0; i < n; i++) {
    const o = i * k;
    for (let c = 0; c < k; c++) scratch[c] = beta * logits[o + c];
    const lse = logSumExpRow(scratch, 0, k);
    let mean = 0;
    let second = 0;
    for (let c = 0; c < k; c++) {
      const p = Math.exp(scratch[c] - lse);
      mean += p * logits[o + c];
      second += p * logits[o + c] * logits[o + c];
    }
    nll += lse - beta * logits[o + labels[i]];
    d1 += mean - logits[o + labels[i]];
    d2 += second - mean * mean;
  }
  return [nll / n, d1 / n, d2 / n];
}

export function fitTemperature(
  logits: LogitArray,
  labels: Int32Array,
  classCount: number,
): { params: TemperatureParams; report: FitReport } {
  if (labels.length === 0) throw new KnobError('INVALID_INPUT', 'temperature scaling needs calibration data');
  const scratch = new Float64Array(classCount);
  // Bracket the root of the derivative in beta: d1 is non-decreasing in beta.
  let lo = 0;
  let hi = 1;
  while (nllAndDerivatives(logits, labels, classCount, hi, scratch)[1] < 0 && hi < 1e6) hi *= 2;
  if (nllAndDerivatives(logits, labels, classCount, 1e-12, scratch)[1] > 0) {
    // The labels disagree with the logits' order: the NLL keeps falling as T grows without bound.
    const [nll] = nllAndDerivatives(logits, labels, classCount, 1e-12, scratch);
    return {
      params: { temperature: 1e12 },
      report: { method: 'temperature scaling', objectiveName: 'NLL', objective: nll, iterations: 0, converged: false },
    };
  }
  let beta = Math.min(1, hi);
  let iterations = 0;
  let converged = false;
  for (; iterations < 200; iterations++) {
    const [, d1, d2] = nllAndDerivatives(logits, labels, classCount, beta, scratch);
    if (d1 > 0) hi = beta;
    else lo = beta;
    let next = d2 > 0 ? beta - d1 / d2 : Number.NaN;
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    const step = Math.abs(next - beta);
    beta = next;
    if (step <= 1e-10 * beta) {
      converged = true;
      iterations++;
      break;
    }
  }
  const [nll] = nllAndDerivatives(logits, labels, classCount, beta, scratch);
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
