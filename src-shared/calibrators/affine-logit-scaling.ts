import { KnobError } from '../errors';
import { logSumExpRow, type LogitArray } from '../fusion/logits';
import type { FitReport } from './fit-report';
import { minimizeLbfgs } from './lbfgs';

/**
 * Vector scaling softmax(w * z + b) (2K parameters) and matrix scaling softmax(W z + b)
 * (K^2 + K parameters), both on the logits z (not log p: on log p they are different models,
 * DEFINITIONS.md 4.8). Fitted by L-BFGS on the mean NLL plus an L2 penalty
 * lambda (sum (W - I)^2 + sum b^2) / 2, which keeps matrix scaling well-posed on small sets
 * (lambda = 0 is plain maximum likelihood). Starting point: identity, zero bias.
 */
export interface AffineLogitParams {
  kind: 'vector' | 'matrix';
  classCount: number;
  /** vector: K weights; matrix: K x K row-major. */
  weights: Float64Array;
  bias: Float64Array;
}

/** One row of W z + b (vector: w * z + b) into out[outOffset ..). */
export function affineLogitRowInto(
  kind: 'vector' | 'matrix',
  weights: ArrayLike<number>,
  bias: ArrayLike<number>,
  logits: LogitArray,
  offset: number,
  k: number,
  out: Float64Array,
  outOffset = 0,
): void {
  for (let r = 0; r < k; r++) {
    let v = bias[r];
    if (kind === 'vector') v += weights[r] * logits[offset + r];
    else for (let c = 0; c < k; c++) v += weights[r * k + c] * logits[offset + c];
    out[outOffset + r] = v;
  }
}

function applyRow(
  params: AffineLogitParams,
  logits: LogitArray,
  offset: number,
  out: Float64Array,
  outOffset: number,
): void {
  affineLogitRowInto(params.kind, params.weights, params.bias, logits, offset, params.classCount, out, outOffset);
}

export function applyAffineLogitScaling(params: AffineLogitParams, logits: LogitArray): Float64Array {
  const k = params.classCount;
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length / k; i++) applyRow(params, logits, i * k, out, i * k);
  return out;
}

export function fitAffineLogitScaling(
  kind: 'vector' | 'matrix',
  logits: LogitArray,
  labels: Int32Array,
  classCount: number,
  l2 = kind === 'matrix' ? 1e-3 : 0,
): { params: AffineLogitParams; report: FitReport } {
  const n = labels.length;
  const k = classCount;
  if (n === 0) throw new KnobError('INVALID_INPUT', `${kind} scaling needs calibration data`);
  const weightCount = kind === 'vector' ? k : k * k;
  const start = new Float64Array(weightCount + k);
  for (let r = 0; r < k; r++) start[kind === 'vector' ? r : r * k + r] = 1;
  const row = new Float64Array(k);
  const params: AffineLogitParams = {
    kind,
    classCount: k,
    weights: new Float64Array(weightCount),
    bias: new Float64Array(k),
  };
  const objective = (x: Float64Array, gradient: Float64Array): number => {
    params.weights = x.subarray(0, weightCount);
    params.bias = x.subarray(weightCount);
    gradient.fill(0);
    let nll = 0;
    for (let i = 0; i < n; i++) {
      const o = i * k;
      applyRow(params, logits, o, row, 0);
      const lse = logSumExpRow(row, 0, k);
      nll += lse - row[labels[i]];
      for (let r = 0; r < k; r++) {
        const residual = Math.exp(row[r] - lse) - (labels[i] === r ? 1 : 0);
        gradient[weightCount + r] += residual;
        if (kind === 'vector') gradient[r] += residual * logits[o + r];
        else for (let c = 0; c < k; c++) gradient[r * k + c] += residual * logits[o + c];
      }
    }
    let penalty = 0;
    for (let j = 0; j < x.length; j++) {
      gradient[j] /= n;
      const isDiagonal = j < weightCount && (kind === 'vector' || Math.floor(j / k) === j % k);
      const deviation = j < weightCount && isDiagonal ? x[j] - 1 : x[j];
      penalty += deviation * deviation;
      gradient[j] += l2 * deviation;
    }
    return nll / n + (l2 * penalty) / 2;
  };
  const result = minimizeLbfgs(objective, start, { gradientTolerance: 1e-8 });
  return {
    params: {
      kind,
      classCount: k,
      weights: Float64Array.from(result.x.subarray(0, weightCount)),
      bias: Float64Array.from(result.x.subarray(weightCount)),
    },
    report: {
      method: `${kind} scaling (L-BFGS${l2 > 0 ? `, L2 ${l2} on W - I and b` : ''})`,
      objectiveName: l2 > 0 ? 'NLL + L2 penalty' : 'NLL',
      objective: result.value,
      iterations: result.iterations,
      converged: result.converged,
    },
  };
}
