import { KnobError } from '../errors';
import type { LogitArray } from '../fusion/logits';
import { equalMassEdges } from '../metrics/binning';
import {
  compileNeighbourDistance,
  featureBankSpec,
  fittingNeighbourDistances,
  type FeatureBank,
  type FeatureBankSpec,
  type FeatureCalibratorFit,
} from './feature-bank';

/**
 * Proximity-informed calibration, ProCal (Xiong et al. 2023), in its bin-mean-shift form: a
 * model's confidence is often miscalibrated differently for inputs near the fitting data and far
 * from it, which one confidence map cannot see. Proximity P(x) = exp(-mean distance to the k
 * nearest fitting frames) (feature-bank.ts); the fitting frames are cut into PROXIMITY_BINS
 * equal-mass proximity bins and, within each, CONFIDENCE_BINS equal-mass bins of the top-label
 * confidence; each cell's shift is its accuracy minus its mean confidence, and a frame's
 * confidence c becomes c + shift of its cell. The row keeps its other probabilities' ratios
 * (scaled to 1 - c'), and c' is kept at least as large as the runner-up after scaling, so the
 * top-1 never changes.
 */
export interface ProcalParams {
  neighbours: number;
  bank: FeatureBankSpec;
  /** inner edges of the proximity bins (PROXIMITY_BINS - 1) */
  proximityEdges: number[];
  /** per proximity bin: inner edges of its confidence bins */
  confidenceEdges: number[][];
  /** per proximity bin, per confidence bin: accuracy - mean confidence */
  shifts: number[][];
}

export const PROCAL_NEIGHBOURS = 10;
export const PROXIMITY_BINS = 5;
export const CONFIDENCE_BINS = 5;
/** How far above the runner-up's share the moved confidence stays (so a tie cannot change the top-1). */
export const PROCAL_TOP_MARGIN = 1e-9;

const binOf = (edges: ArrayLike<number>, value: number): number => {
  let b = 0;
  while (b < edges.length && value > edges[b]) b++;
  return b;
};

/** Inner equal-mass edges (midpoints between the groups of np.array_split) of `values`. */
function innerEdges(values: Float64Array, bins: number): number[] {
  if (values.length < bins) return [];
  return Array.from(equalMassEdges(values, bins, 'midpoint').subarray(1, bins));
}

function topOf(logits: LogitArray, offset: number, k: number): { best: number; confidence: number } {
  let best = 0;
  let max = -Infinity;
  for (let c = 0; c < k; c++) {
    if (logits[offset + c] > max) {
      max = logits[offset + c];
      best = c;
    }
  }
  let sum = 0;
  for (let c = 0; c < k; c++) sum += Math.exp(logits[offset + c] - max);
  return { best, confidence: 1 / sum };
}

export const fitProcal: FeatureCalibratorFit<ProcalParams> = (logits, labels, classCount, features, width) => {
  const n = labels.length;
  const k = classCount;
  if (n < PROXIMITY_BINS * CONFIDENCE_BINS * 2)
    throw new KnobError(
      'INVALID_INPUT',
      `proximity-informed calibration needs at least ${PROXIMITY_BINS * CONFIDENCE_BINS * 2} frames, got ${n}`,
    );
  const { bank, distances } = fittingNeighbourDistances(features, width, n, PROCAL_NEIGHBOURS);
  const proximity = Float64Array.from(distances, (d) => Math.exp(-d));
  const confidence = new Float64Array(n);
  const correct = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const top = topOf(logits, i * k, k);
    confidence[i] = top.confidence;
    correct[i] = top.best === labels[i] ? 1 : 0;
  }
  const proximityEdges = innerEdges(proximity, PROXIMITY_BINS);
  const members: number[][] = Array.from({ length: PROXIMITY_BINS }, () => []);
  for (let i = 0; i < n; i++) members[binOf(proximityEdges, proximity[i])].push(i);
  const confidenceEdges: number[][] = [];
  const shifts: number[][] = [];
  let squaredGap = 0;
  for (const rows of members) {
    const edges = innerEdges(
      Float64Array.from(rows, (i) => confidence[i]),
      CONFIDENCE_BINS,
    );
    const count = new Float64Array(edges.length + 1);
    const gap = new Float64Array(edges.length + 1);
    for (const i of rows) {
      const b = binOf(edges, confidence[i]);
      count[b]++;
      gap[b] += correct[i] - confidence[i];
    }
    confidenceEdges.push(edges);
    shifts.push(Array.from(gap, (g, b) => (count[b] > 0 ? g / count[b] : 0)));
    for (let b = 0; b < gap.length; b++) if (count[b] > 0) squaredGap += (gap[b] * gap[b]) / count[b] / n;
  }
  return {
    params: { neighbours: PROCAL_NEIGHBOURS, bank: featureBankSpec(bank), proximityEdges, confidenceEdges, shifts },
    report: {
      method: `proximity-informed calibration, bin-mean-shift (Xiong et al. 2023): ${PROXIMITY_BINS} proximity x ${CONFIDENCE_BINS} confidence equal-mass bins, proximity from ${PROCAL_NEIGHBOURS} nearest of ${bank.rows} fitting frames`,
      objectiveName: 'squared binned calibration gap before the shift (fitting frames)',
      objective: squaredGap,
      iterations: 1,
      converged: true,
    },
  };
};

/** A fitted ProCal ready to apply row by row. */
export function compileProcal(params: ProcalParams): {
  bank: FeatureBank;
  rowInto(
    logits: LogitArray,
    offset: number,
    k: number,
    features: ArrayLike<number>,
    featureOffset: number,
    out: Float64Array,
    outOffset: number,
  ): void;
} {
  const { bank, distanceOf } = compileNeighbourDistance(params.bank, params.neighbours);
  return {
    bank,
    rowInto(logits, offset, k, features, featureOffset, out, outOffset) {
      const proximity = Math.exp(-distanceOf(features, featureOffset));
      const cell = binOf(params.proximityEdges, proximity);
      const { best, confidence } = topOf(logits, offset, k);
      const shifted = confidence + params.shifts[cell][binOf(params.confidenceEdges[cell], confidence)];
      // log-probabilities of the row, then the top one moved and the others rescaled
      let max = -Infinity;
      for (let c = 0; c < k; c++) max = Math.max(max, logits[offset + c]);
      let sum = 0;
      for (let c = 0; c < k; c++) sum += Math.exp(logits[offset + c] - max);
      const rest = 1 - confidence;
      let runnerUp = 0;
      for (let c = 0; c < k; c++)
        if (c !== best) runnerUp = Math.max(runnerUp, Math.exp(logits[offset + c] - max) / sum);
      // c' >= runner-up x (1 - c') / (1 - c) keeps the top-1: c' >= r / (1 - c + r), a hair above
      // it so that a tie (which argmax breaks by index) cannot hand the top to the runner-up
      const floor = rest > 0 ? (runnerUp / (rest + runnerUp)) * (1 + PROCAL_TOP_MARGIN) : 1 / k;
      const top = Math.min(1, Math.max(shifted, floor, 1 / k));
      const scale = rest > 0 ? (1 - top) / rest : 0;
      for (let c = 0; c < k; c++) {
        const p =
          c === best ? top : rest > 0 ? (Math.exp(logits[offset + c] - max) / sum) * scale : (1 - top) / (k - 1);
        out[outOffset + c] = p > 0 ? Math.max(-745, Math.log(p)) : -745;
      }
    },
  };
}
