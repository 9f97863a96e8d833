import { KnobError } from '../errors';
import { locateBin } from '../metrics/bin-location';
import { assignBins } from '../metrics/binning';
import type { FitReport } from './fit-report';
import { applyPlatt, fitPlatt, plattAt, type PlattParams } from './platt-scaling';

/**
 * Scaling-binning (Kumar, Liang & Ma 2019): fit Platt scaling g, then cut g's outputs into B
 * equal-mass bins and output the mean of g (not of the labels) within each bin. The output is
 * discrete, so its calibration error can be measured (the debiased estimator applies).
 * `split: 'same-data'` fits both steps on all the data (as the authors' library does);
 * 'halves' fits g on the first half and the bins on the second (as the paper).
 */
export interface ScalingBinningParams {
  platt: PlattParams;
  edges: Float64Array;
  values: Float64Array;
}

export function fitScalingBinning(
  scores: Float64Array,
  outcomes: ArrayLike<number>,
  options: { bins?: number; split?: 'same-data' | 'halves' } = {},
): { params: ScalingBinningParams; report: FitReport } {
  const n = scores.length;
  const bins = options.bins ?? 15;
  const split = options.split ?? 'same-data';
  if (n < 2 * bins)
    throw new KnobError(
      'INVALID_INPUT',
      `scaling-binning with ${bins} bins needs at least ${2 * bins} samples, got ${n}`,
    );
  const half = split === 'halves' ? Math.floor(n / 2) : n;
  const platt = fitPlatt(
    scores.subarray(0, half),
    Array.from({ length: half }, (_, i) => outcomes[i]),
  );
  const binScores = split === 'halves' ? scores.subarray(half) : scores;
  const scaled = applyPlatt(platt.params, binScores);
  const assigned = assignBins(scaled, { scheme: 'equal-mass', bins, massEdges: 'midpoint', edgeRule: 'right-closed' });
  const sum = new Float64Array(bins);
  const count = new Float64Array(bins);
  for (let i = 0; i < scaled.length; i++) {
    sum[assigned.binOf[i]] += scaled[i];
    count[assigned.binOf[i]]++;
  }
  const values = sum.map((s, b) => (count[b] > 0 ? s / count[b] : (assigned.edges[b] + assigned.edges[b + 1]) / 2));
  return {
    params: { platt: platt.params, edges: assigned.edges, values },
    report: {
      method: `scaling-binning (Platt, then ${bins} equal-mass bins, ${split})`,
      objectiveName: 'Platt log loss',
      objective: platt.report.objective,
      iterations: platt.report.iterations,
      converged: platt.report.converged,
    },
  };
}

/** The calibrated score of one score: Platt, then the mean of Platt's outputs in its bin. */
export function scalingBinningAt(params: ScalingBinningParams, score: number): number {
  return params.values[locateBin(plattAt(params.platt, score), params.edges, 'right-closed')];
}

export function applyScalingBinning(params: ScalingBinningParams, scores: Float64Array): Float64Array {
  return scores.map((s) => scalingBinningAt(params, s));
}
