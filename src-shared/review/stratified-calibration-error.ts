import { assignBins, binningIdentity, type EqualWidthSpec } from '../metrics/binning';
import { percentileIntervalContaining } from '../metrics/bootstrap';
import { normalDraw, seededRandom } from '../random';

/** A window's frames as the review queue sees them: every frame's top-1 confidence, and its outcome if labelled. */
export interface WindowOutcomes {
  confidence: Float64Array;
  /** 1 right, 0 wrong, -1 not labelled. */
  outcome: Int8Array;
}

export const UNLABELLED_OUTCOME = -1;

export interface StratifiedBin {
  /** Frames of the window in the bin, labelled or not, and their mean confidence. */
  frames: number;
  meanConfidence: number;
  labelled: number;
  right: number;
}

export const STRATIFIED_BINNING: EqualWidthSpec = { scheme: 'equal-width', bins: 15, edgeRule: 'left-closed' };

export function stratifiedEceIdentity(spec: EqualWidthSpec = STRATIFIED_BINNING): string {
  return (
    `ECE(top-label, ${binningIdentity(spec)}, L1, stratified: bin weights from every frame of the window, ` +
    "accuracy from its labelled frames (a bin with none: 1/2); interval: draws from each bin's Jeffreys posterior)"
  );
}

/**
 * A window's frames in confidence bins: how many a bin holds (labelled or not), their mean
 * confidence, and the labelled ones' outcomes. With labels chosen by the review queue rather than
 * at random, the labelled frames alone misweigh the bins; the stratified estimate weighs each bin
 * by all its frames, which need no label, and reads only its accuracy from the labels (assumed
 * representative within the bin).
 */
export function stratifiedBins(
  window: WindowOutcomes,
  spec: EqualWidthSpec = STRATIFIED_BINNING,
): {
  bins: StratifiedBin[];
  binOf: Int32Array;
} {
  const { binOf, binCount } = assignBins(window.confidence, spec);
  const bins = Array.from({ length: binCount }, () => ({ frames: 0, meanConfidence: 0, labelled: 0, right: 0 }));
  for (let i = 0; i < binOf.length; i++) {
    const bin = bins[binOf[i]!]!;
    bin.frames++;
    bin.meanConfidence += window.confidence[i]!;
    if (window.outcome[i] !== UNLABELLED_OUTCOME) {
      bin.labelled++;
      bin.right += window.outcome[i]!;
    }
  }
  for (const bin of bins) if (bin.frames > 0) bin.meanConfidence /= bin.frames;
  return { bins, binOf };
}

/** The Jeffreys posterior mean and variance of a bin's accuracy: Beta(right + 1/2, wrong + 1/2). */
export function binAccuracyPosterior(bin: StratifiedBin): { mean: number; variance: number } {
  const mean = (bin.right + 0.5) / (bin.labelled + 1);
  return { mean, variance: (mean * (1 - mean)) / (bin.labelled + 2) };
}

/**
 * sum_b w_b |acc_b - conf_b|, w_b the bin's share of the window's frames, acc_b the share of its
 * labelled frames that are right (1/2, the prior's mean, where it has none): with every frame
 * labelled, the plain ECE of the same bins.
 */
export function stratifiedEce(bins: readonly StratifiedBin[]): number {
  const total = bins.reduce((n, b) => n + b.frames, 0);
  let ece = 0;
  for (const bin of bins) {
    if (bin.frames === 0) continue;
    const accuracy = bin.labelled === 0 ? 0.5 : bin.right / bin.labelled;
    ece += (bin.frames / total) * Math.abs(accuracy - bin.meanConfidence);
  }
  return ece;
}

/**
 * The stratified ECE with an interval: each draw takes every bin's accuracy from a normal
 * approximation of its Jeffreys posterior (clipped to [0, 1]), so a bin with few labels, or none,
 * widens the interval by what it leaves unknown (a resample of one label would not). The interval
 * is the draws' percentile interval widened to contain the estimate; with no label at all the
 * estimate is null and the interval the prior's.
 */
export function stratifiedEceInterval(
  bins: readonly StratifiedBin[],
  options: { draws: number; seed: number; level?: number },
): { value: number | null; low: number; high: number } {
  const total = bins.reduce((n, b) => n + b.frames, 0);
  const posteriors = bins.map(binAccuracyPosterior);
  const random = seededRandom(options.seed);
  const draws = new Float64Array(options.draws);
  for (let d = 0; d < options.draws; d++) {
    let ece = 0;
    bins.forEach((bin, b) => {
      if (bin.frames === 0) return;
      const { mean, variance } = posteriors[b]!;
      const accuracy = Math.min(1, Math.max(0, mean + Math.sqrt(variance) * normalDraw(random)));
      ece += (bin.frames / total) * Math.abs(accuracy - bin.meanConfidence);
    });
    draws[d] = ece;
  }
  // with no label at all there is no estimate, only the range the prior allows
  const value = bins.every((b) => b.labelled === 0) ? null : stratifiedEce(bins);
  return { value, ...percentileIntervalContaining(draws, value, options.level) };
}

/** Posterior draws of the interval unless told otherwise (`knob review --draws`, the desk). */
export const DEFAULT_INTERVAL_DRAWS = 2000;
