import { logSumExpRow, type LogitArray } from '../fusion/logits';
import { LOG_FLOOR, type CompiledRows } from './calibrator-descriptor';
import type { FitReport } from './fit-report';
import type { CalibratorSpec } from './output-calibrator';

/** The specs of the methods for binary scores, applied one-vs-rest (output-calibrator.ts). */
export type OneVsRestSpec = Extract<
  CalibratorSpec,
  { method: 'platt' | 'beta' | 'isotonic' | 'histogram-binning' | 'scaling-binning' }
>;

/** Class c's fitted map f_c of its softmax probability p (before the row is renormalised). */
export type OneVsRest = (c: number, p: number) => number;

export { oneVsRestMaps } from './one-vs-rest-descriptors';

/**
 * A one-vs-rest method's rows: class c's probability p_c mapped by f_c, the row renormalised,
 * q = f(p) / sum f(p) (uniform when every f_c is 0), returned as log q (at least LOG_FLOOR); the
 * probability floor comes after (compileCalibrator).
 */
export function oneVsRestRows(perClass: OneVsRest): CompiledRows {
  return {
    featureWidth: null,
    rowInto(logits, offset, k, out, outOffset, scratch) {
      const lse = logSumExpRow(logits, offset, k);
      let sum = 0;
      for (let c = 0; c < k; c++) {
        const q = Math.max(0, perClass(c, Math.exp(logits[offset + c] - lse)));
        scratch[c] = q;
        sum += q;
      }
      for (let c = 0; c < k; c++) {
        const q = sum > 0 ? scratch[c] / sum : 1 / k;
        out[outOffset + c] = q > 0 ? Math.max(LOG_FLOOR, Math.log(q)) : LOG_FLOOR;
      }
    },
  };
}

/** Class k's probability and outcome over the rows: the data of its one-vs-rest fit. */
function classColumn(logits: LogitArray, labels: Int32Array, k: number, c: number): [Float64Array, Uint8Array] {
  const n = labels.length;
  const p = new Float64Array(n);
  const y = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    p[i] = Math.exp(logits[i * k + c] - logSumExpRow(logits, i * k, k));
    y[i] = labels[i] === c ? 1 : 0;
  }
  return [p, y];
}

/**
 * Fits each class's map on (p_c, y = c) with `fitClass` (checked input: fitCalibrator): the
 * parameters per class and one report for the whole.
 */
export function fitEachClass<P>(
  logits: LogitArray,
  labels: Int32Array,
  k: number,
  fitClass: (p: Float64Array, y: Uint8Array) => { params: P; report: FitReport },
): { perClass: P[]; report: FitReport } {
  const columns = Array.from({ length: k }, (_, c) => classColumn(logits, labels, k, c));
  const reports: FitReport[] = [];
  const perClass = columns.map(([p, y]) => {
    const fit = fitClass(p, y);
    reports.push(fit.report);
    return fit.params;
  });
  return {
    perClass,
    report: {
      method: `${reports[0].method}, one-vs-rest over ${k} classes`,
      objectiveName: `${reports[0].objectiveName} (mean over classes)`,
      objective: reports.reduce((sum, r) => sum + r.objective, 0) / reports.length,
      iterations: Math.max(...reports.map((r) => r.iterations)),
      converged: reports.every((r) => r.converged),
    },
  };
}
