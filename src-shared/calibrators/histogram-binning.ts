import { KnobError } from '../errors';
import { locateBin } from '../metrics/bin-location';
import { assignBins, binningIdentity, type BinningSpec } from '../metrics/binning';
import type { FitReport } from './fit-report';

/**
 * Histogram binning (Zadrozny & Elkan 2001): bins fitted on calibration scores (equal-mass by
 * default, as uncertainty-calibration and Gupta; equal-width as netcal); the output is the mean
 * outcome of the score's bin; an empty bin outputs its midpoint (as uncertainty-calibration).
 */
export interface HistogramBinningParams {
  spec: BinningSpec;
  edges: Float64Array;
  values: Float64Array;
}

export function fitHistogramBinning(
  scores: Float64Array,
  outcomes: ArrayLike<number>,
  spec: BinningSpec = { scheme: 'equal-mass', bins: 15, massEdges: 'midpoint', edgeRule: 'right-closed' },
): { params: HistogramBinningParams; report: FitReport } {
  if (scores.length === 0) throw new KnobError('INVALID_INPUT', 'histogram binning needs calibration data');
  const bins = assignBins(scores, spec);
  const sum = new Float64Array(bins.binCount);
  const count = new Float64Array(bins.binCount);
  for (let i = 0; i < scores.length; i++) {
    sum[bins.binOf[i]] += outcomes[i];
    count[bins.binOf[i]]++;
  }
  const values = new Float64Array(bins.binCount);
  let squared = 0;
  for (let b = 0; b < bins.binCount; b++) {
    const lo = b < spec.bins ? bins.edges[b] : 1;
    const hi = b < spec.bins ? bins.edges[b + 1] : 1;
    values[b] = count[b] > 0 ? sum[b] / count[b] : (lo + hi) / 2;
  }
  for (let i = 0; i < scores.length; i++) squared += (values[bins.binOf[i]] - outcomes[i]) ** 2;
  return {
    params: { spec, edges: bins.edges, values },
    report: {
      method: `histogram binning (${binningIdentity(spec)})`,
      objectiveName: 'mean squared error',
      objective: squared / scores.length,
      iterations: 1,
      converged: true,
    },
  };
}

/** The calibrated score of one score: the mean outcome of its bin. */
export function histogramBinningAt(params: HistogramBinningParams, score: number): number {
  return params.values[locateBin(score, params.edges, params.spec.edgeRule)];
}

export function applyHistogramBinning(params: HistogramBinningParams, scores: Float64Array): Float64Array {
  return scores.map((s) => histogramBinningAt(params, s));
}
