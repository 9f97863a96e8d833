import type { CancelSignal } from '../cancel-signal';
import { logSumExpRow, type LogitArray } from '../fusion/logits';
import {
  affineLogitRowInto,
  fitAffineLogitScaling,
  type AffineLogitParams,
  type OdirRegularisation,
} from './affine-logit-scaling';
import type { FitReport } from './fit-report';

/**
 * Dirichlet calibration with ODIR (Kull et al. 2019): softmax(W ln p + b), the off-diagonal weights
 * and the intercepts penalised (lambda / (K (K - 1)) sum_{i != j} W_ij^2 + mu / K sum b^2), lambda and
 * mu chosen by cross-validation as the paper does. Here lambda = mu, from ODIR_GRID, by 3-fold
 * cross-fitting (rows i mod 3) on at most CV_ROWS rows (an even stride through the data, so a long
 * recording costs 3 x |grid| small fits), scored by held-out NLL; then one fit on every row at the
 * chosen value. With fewer than CV_MIN_ROWS rows the middle of the grid is used, and the report says so.
 */
export const ODIR_GRID = [1e-4, 1e-3, 1e-2, 1e-1];
const CV_ROWS = 5_000;
const CV_MIN_ROWS = 60;
const FOLDS = 3;

export interface DirichletParams {
  weights: Float64Array;
  bias: Float64Array;
  regularisation: OdirRegularisation;
}

function logProbabilities(logits: LogitArray, k: number): Float64Array {
  const logP = new Float64Array(logits.length);
  for (let o = 0; o < logits.length; o += k) {
    const lse = logSumExpRow(logits, o, k);
    for (let c = 0; c < k; c++) logP[o + c] = logits[o + c] - lse;
  }
  return logP;
}

function pick(logP: Float64Array, labels: Int32Array, k: number, rows: number[]) {
  const z = new Float64Array(rows.length * k);
  const y = new Int32Array(rows.length);
  rows.forEach((r, i) => {
    z.set(logP.subarray(r * k, (r + 1) * k), i * k);
    y[i] = labels[r];
  });
  return { z, y };
}

/** Mean held-out NLL of the fitted map on rows (z, y). */
function heldOutNll(weights: Float64Array, bias: Float64Array, z: Float64Array, y: Int32Array, k: number): number {
  const row = new Float64Array(k);
  let sum = 0;
  for (let i = 0; i < y.length; i++) {
    affineLogitRowInto('matrix', weights, bias, z, i * k, k, row);
    sum += logSumExpRow(row, 0, k) - row[y[i]];
  }
  return sum / y.length;
}

export function fitDirichlet(
  logits: LogitArray,
  labels: Int32Array,
  classCount: number,
  signal?: CancelSignal,
): { params: DirichletParams; report: FitReport } {
  const k = classCount;
  const n = labels.length;
  const logP = logProbabilities(logits, k);
  let chosen = ODIR_GRID[1];
  let selection = `lambda = mu = ${chosen} (fewer than ${CV_MIN_ROWS} rows: no cross-validation)`;
  if (n >= CV_MIN_ROWS) {
    const stride = Math.max(1, Math.floor(n / CV_ROWS));
    const sample = Array.from({ length: Math.floor(n / stride) }, (_, i) => i * stride);
    // fold by fold, the grid in order, each fit starting from the fold's fit at the value before
    // (the optimum moves little from one penalty to the next: most of the optimiser's steps saved)
    const totals = ODIR_GRID.map(() => 0);
    for (let fold = 0; fold < FOLDS; fold++) {
      const train = pick(
        logP,
        labels,
        k,
        sample.filter((_, i) => i % FOLDS !== fold),
      );
      const test = pick(
        logP,
        labels,
        k,
        sample.filter((_, i) => i % FOLDS === fold),
      );
      let previous: AffineLogitParams | undefined;
      ODIR_GRID.forEach((value, v) => {
        const fit = fitAffineLogitScaling(
          'matrix',
          train.z,
          train.y,
          k,
          { offDiagonal: value, intercept: value },
          signal,
          previous,
        );
        previous = fit.params;
        totals[v]! += heldOutNll(fit.params.weights, fit.params.bias, test.z, test.y, k) * test.y.length;
      });
    }
    const scores = totals.map((total) => total / sample.length);
    const best = scores.indexOf(Math.min(...scores));
    chosen = ODIR_GRID[best];
    selection =
      `lambda = mu = ${chosen} by ${FOLDS}-fold cross-validation on ${sample.length} rows ` +
      `(held-out NLL ${ODIR_GRID.map((v, i) => `${v}: ${scores[i].toFixed(4)}`).join(', ')})`;
  }
  const regularisation = { offDiagonal: chosen, intercept: chosen };
  const fit = fitAffineLogitScaling('matrix', logP, labels, k, regularisation, signal);
  return {
    params: { weights: fit.params.weights, bias: fit.params.bias, regularisation },
    report: { ...fit.report, method: `Dirichlet calibration on ln p (${fit.report.method}); ${selection}` },
  };
}
