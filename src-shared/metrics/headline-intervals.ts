import { logSumExpRow } from '../fusion/logits';
import { binnedStatistics } from './bin-statistics';
import { bootstrapInterval, resample, type BootstrapInterval } from './bootstrap';
import { expectedCalibrationError } from './calibration-error';
import { EQUAL_WIDTH_15 } from './metric-suite';
import type { ClassScores, TopLabelScores } from './scores';

/**
 * Seeded percentile-bootstrap intervals for the figures the desk shows large: accuracy, NLL and
 * ECE (top-label, 15 equal-width bins, [lo,hi) last closed, L1). Each resample re-bins the
 * resampled confidences, so the interval covers the estimator as computed, keyed by the identity
 * of the value it belongs to.
 */
export function headlineIntervals(
  scores: ClassScores,
  top: TopLabelScores,
  options: { replicates?: number; seed?: number } = {},
): Record<string, BootstrapInterval> {
  const n = scores.sampleCount;
  const k = scores.classCount;
  const nll = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const y = scores.labels[i];
    nll[i] =
      scores.logits !== null
        ? (scores.logSumExp?.[i] ?? logSumExpRow(scores.logits, i * k, k)) - scores.logits[i * k + y]
        : -Math.log(scores.probabilities[i * k + y]);
  }
  const bootstrap = { replicates: options.replicates ?? 200, seed: options.seed ?? 0 };
  const mean =
    (values: Float64Array | Uint8Array) =>
    (indices: Uint32Array): number => {
      let sum = 0;
      for (let i = 0; i < indices.length; i++) sum += values[indices[i]];
      return sum / indices.length;
    };
  const ece = (indices: Uint32Array): number => {
    const confidence = resample(top.confidence, indices);
    const correct = resample(top.correct, indices);
    return expectedCalibrationError(binnedStatistics(confidence, correct, EQUAL_WIDTH_15));
  };
  return {
    'accuracy(top-1)': bootstrapInterval(n, mean(top.correct), bootstrap),
    [scores.logits !== null
      ? 'NLL(multiclass, from logits, natural log, mean)'
      : 'NLL(multiclass, from probabilities, natural log, mean, unclipped)']: bootstrapInterval(
      n,
      mean(nll),
      bootstrap,
    ),
    'ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)': bootstrapInterval(n, ece, bootstrap),
  };
}
