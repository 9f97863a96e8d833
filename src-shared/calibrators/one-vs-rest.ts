import { logSumExpRow, type LogitArray } from '../fusion/logits';
import { betaAt, fitBeta } from './beta-calibration';
import type { FitReport } from './fit-report';
import { fitHistogramBinning, histogramBinningAt } from './histogram-binning';
import { fitIsotonic, isotonicAt } from './isotonic-regression';
import type { CalibratorSpec } from './output-calibrator';
import { fitPlatt, plattAt } from './platt-scaling';
import { fitScalingBinning, scalingBinningAt } from './scaling-binning';

/** The specs of the methods for binary scores, applied one-vs-rest (output-calibrator.ts). */
export type OneVsRestSpec = Extract<
  CalibratorSpec,
  { method: 'platt' | 'beta' | 'isotonic' | 'histogram-binning' | 'scaling-binning' }
>;

/** Class c's fitted map f_c of its softmax probability p (before the row is renormalised). */
export type OneVsRest = (c: number, p: number) => number;

/** Each class's map of a one-vs-rest spec, its arrays typed once (the live path maps every frame). */
export function oneVsRestMaps(spec: OneVsRestSpec): OneVsRest {
  switch (spec.method) {
    case 'platt':
      return (c, p) => plattAt(spec.perClass[c], p);
    case 'beta':
      return (c, p) => betaAt(spec.perClass[c], p);
    case 'isotonic': {
      const maps = spec.perClass.map((f) => ({ x: Float64Array.from(f.x), y: Float64Array.from(f.y) }));
      return (c, p) => isotonicAt(maps[c], p);
    }
    case 'histogram-binning': {
      const maps = spec.perClass.map((f) => ({
        spec: {
          scheme: 'equal-mass' as const,
          bins: f.values.length,
          massEdges: 'midpoint' as const,
          edgeRule: spec.edgeRule,
        },
        edges: Float64Array.from(f.edges),
        values: Float64Array.from(f.values),
      }));
      return (c, p) => histogramBinningAt(maps[c], p);
    }
    case 'scaling-binning': {
      const maps = spec.perClass.map((f) => ({
        platt: f.platt,
        edges: Float64Array.from(f.edges),
        values: Float64Array.from(f.values),
      }));
      return (c, p) => scalingBinningAt(maps[c], p);
    }
  }
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

/** Fits one one-vs-rest method: each class's map on (p_c, y = c), checked input (fitCalibrator). */
export function fitOneVsRest(
  method: OneVsRestSpec['method'],
  logits: LogitArray,
  labels: Int32Array,
  k: number,
): { spec: OneVsRestSpec; report: FitReport } {
  const columns = Array.from({ length: k }, (_, c) => classColumn(logits, labels, k, c));
  const reports: FitReport[] = [];
  const keep = <T extends { report: FitReport }>(fit: T): T => (reports.push(fit.report), fit);
  const spec = ((): OneVsRestSpec => {
    switch (method) {
      case 'platt':
        return { method, perClass: columns.map(([p, y]) => keep(fitPlatt(p, y)).params) };
      case 'beta':
        return { method, perClass: columns.map(([p, y]) => keep(fitBeta(p, y)).params) };
      case 'isotonic':
        return {
          method,
          perClass: columns.map(([p, y]) => {
            const { params } = keep(fitIsotonic(p, y));
            return { x: Array.from(params.x), y: Array.from(params.y) };
          }),
        };
      case 'histogram-binning':
        return {
          method,
          edgeRule: 'right-closed',
          perClass: columns.map(([p, y]) => {
            const { params } = keep(fitHistogramBinning(p, y));
            return { edges: Array.from(params.edges), values: Array.from(params.values) };
          }),
        };
      case 'scaling-binning':
        return {
          method,
          perClass: columns.map(([p, y]) => {
            const { params } = keep(fitScalingBinning(p, y));
            return { platt: params.platt, edges: Array.from(params.edges), values: Array.from(params.values) };
          }),
        };
    }
  })();
  return {
    spec,
    report: {
      method: `${reports[0].method}, one-vs-rest over ${k} classes`,
      objectiveName: `${reports[0].objectiveName} (mean over classes)`,
      objective: reports.reduce((sum, r) => sum + r.objective, 0) / reports.length,
      iterations: Math.max(...reports.map((r) => r.iterations)),
      converged: reports.every((r) => r.converged),
    },
  };
}
