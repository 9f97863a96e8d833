import { KnobError } from '../errors';
import { expNonPositive } from '../fusion/exp-non-positive';
import type { LogitArray } from '../fusion/logits';
import type { FitReport } from './fit-report';
import { TEMPERATURE_RANGE } from '../gate/accepted-ranges';

/**
 * Temperature scaling (Guo et al. 2017): p = softmax(z / T), T > 0 minimising the NLL on
 * calibration data. The NLL is convex in beta = 1/T, with derivative mean(E_p[z] - z_y) and second
 * derivative mean(Var_p[z]) >= 0, so a safeguarded Newton iteration on beta (bisection inside the
 * bracket the derivative's signs give, doubling while there is no upper end) converges to an error
 * below 1e-10 beta (the last step, or the next one predicted from the quadratic rate) in a handful
 * of passes. Each pass is one sweep over the logits with one
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

/** Mean NLL at beta and its first two derivatives in beta, in one pass over every `stride`-th row. */
function nllAndDerivatives(data: Prepared, beta: number, stride = 1): [number, number, number] {
  const { logits, labels, k, rowMax } = data;
  const n = labels.length;
  let nll = 0;
  let d1 = 0;
  let d2 = 0;
  let rows = 0;
  for (let i = 0; i < n; i += stride) {
    rows++;
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
  return [nll / rows, d1 / rows, d2 / rows];
}

/** Subsample sizes Newton climbs through before the full data, each starting from the last optimum. */
const WARM_START_ROWS = [10_000, 100_000];

/**
 * Safeguarded Newton on beta from `beta`: bisection inside the bracket the derivative's signs
 * give, doubling while there is no upper end, until |step| <= tolerance x beta.
 */
function newtonOnBeta(
  data: Prepared,
  beta: number,
  stride: number,
  tolerance: number,
): { beta: number; nll: number; iterations: number; converged: boolean } {
  let lo = 0;
  let hi = Infinity;
  let nll = Number.NaN;
  let previousNewtonStep = Number.NaN;
  for (let iterations = 0; iterations < 200; iterations++) {
    const [value, d1, d2] = nllAndDerivatives(data, beta, stride);
    nll = value;
    if (d1 > 0) hi = beta;
    else lo = beta;
    let next = d2 > 0 ? beta - d1 / d2 : Number.NaN;
    const newton = next > lo && next < hi;
    if (!newton) next = Number.isFinite(hi) ? 0.5 * (lo + hi) : 2 * beta;
    const step = Math.abs(next - beta);
    beta = next;
    // Newton converges quadratically here: the error after this step is about c step^2, with
    // c = step / previous step^2 measured on the last two Newton steps. When that is already
    // within the tolerance, the pass that would only confirm it is not spent (it is one full sweep
    // over the data). The NLL is that of the last evaluated beta: it differs from the returned
    // one by O(step^2), below double precision at these steps.
    const predictedError = newton ? (step / (previousNewtonStep * previousNewtonStep)) * step * step : Number.NaN;
    if (step <= tolerance * beta || predictedError <= tolerance * beta)
      return { beta, nll, iterations: iterations + 1, converged: true };
    previousNewtonStep = newton ? step : Number.NaN;
  }
  return { beta, nll, iterations: 200, converged: false };
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
    // The labels disagree with the logits' order: the NLL keeps falling as T grows without bound;
    // the fit stops at the largest accepted temperature (accepted-ranges.ts).
    const [nll] = nllAndDerivatives(data, 1 / TEMPERATURE_RANGE.max);
    return {
      params: { temperature: TEMPERATURE_RANGE.max },
      report: { method: 'temperature scaling', objectiveName: 'NLL', objective: nll, iterations: 0, converged: false },
    };
  }
  // Large inputs: Newton converges in a few full passes from the optimum of every stride-th row
  // (quadratic convergence from a start within the subsample's sampling error), and that
  // optimum is found the same way from a smaller subsample.
  let start = 1;
  let warmPasses = 0;
  for (const rows of WARM_START_ROWS) {
    const stride = Math.floor(n / rows);
    if (stride < 2) break;
    const warm = newtonOnBeta(data, start, stride, 1e-6);
    start = warm.beta;
    warmPasses += warm.iterations;
  }
  const { beta, nll, iterations, converged } = newtonOnBeta(data, start, 1, 1e-10);
  // within the accepted range, so the spec it makes is one every reader takes
  const temperature = Math.min(TEMPERATURE_RANGE.max, Math.max(TEMPERATURE_RANGE.min, 1 / beta));
  return {
    params: { temperature },
    report: {
      method:
        warmPasses === 0
          ? 'temperature scaling (Newton on 1/T)'
          : `temperature scaling (Newton on 1/T, started from subsamples' optima in ${warmPasses} subsample passes)`,
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
