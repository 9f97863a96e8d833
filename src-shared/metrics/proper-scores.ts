import { logSumExpRow, type LogitArray } from '../fusion/logits';
import { metric, type MetricValue } from './metric-value';
import type { ClassScores, TopLabelScores } from './scores';

/**
 * NLL, Brier scores and accuracy (DEFINITIONS.md 4.4). NLL uses the logits when given
 * (logsumexp(z) - z_y, no clipping, so it is finite for any finite logits); from probabilities it
 * is -log p_y, +Infinity for a true class given probability 0 (reported, never clipped).
 */
/** log sum_k exp(z_ik) - z_iy: sample i's NLL from its logits (scores.ts computes it in the softmax pass). */
export function sampleNllFromLogits(logits: LogitArray, classCount: number, i: number, label: number): number {
  return logSumExpRow(logits, i * classCount, classCount) - logits[i * classCount + label];
}

export const NLL_FROM_LOGITS = 'NLL(multiclass, from logits, natural log, mean)';

export function negativeLogLikelihood(scores: ClassScores): MetricValue {
  const { sampleCount: n, classCount: k, labels, logits, probabilities, sampleNll } = scores;
  let sum = 0;
  if (sampleNll !== null || logits !== null) {
    for (let i = 0; i < n; i++)
      sum += sampleNll !== null ? sampleNll[i] : sampleNllFromLogits(logits!, k, i, labels[i]);
    return metric('NLL', NLL_FROM_LOGITS, sum / n);
  }
  for (let i = 0; i < n; i++) sum -= Math.log(probabilities[i * k + labels[i]]);
  return metric('NLL', 'NLL(multiclass, from probabilities, natural log, mean, unclipped)', sum / n);
}

/** sum_k (p_ik - 1[y_i = k])^2 of the row at `offset`: one sample's multiclass Brier term. */
export function sampleBrierOfRow(
  probabilities: Float64Array,
  offset: number,
  classCount: number,
  label: number,
): number {
  let sum = 0;
  for (let c = 0; c < classCount; c++) {
    const d = probabilities[offset + c] - (c === label ? 1 : 0);
    sum += d * d;
  }
  return sum;
}

export function multiclassBrier(scores: ClassScores): MetricValue {
  const { sampleCount: n, classCount: k, labels, probabilities, sampleBrier } = scores;
  let sum = 0;
  if (sampleBrier !== null) for (let i = 0; i < n; i++) sum += sampleBrier[i];
  else for (let i = 0; i < n; i++) sum += sampleBrierOfRow(probabilities, i * k, k, labels[i]);
  return metric('Brier', 'Brier(multiclass, sum over classes, mean over samples, range [0, 2])', sum / n);
}

export function topLabelBrier(top: TopLabelScores): MetricValue {
  let sum = 0;
  for (let i = 0; i < top.confidence.length; i++) {
    const d = top.confidence[i] - top.correct[i];
    sum += d * d;
  }
  return metric(
    'Brier (top-label)',
    'Brier(top-label: confidence vs correct, mean, range [0, 1])',
    sum / top.confidence.length,
  );
}

export function accuracy(top: TopLabelScores): MetricValue {
  let correct = 0;
  for (let i = 0; i < top.correct.length; i++) correct += top.correct[i];
  return metric('accuracy', 'accuracy(top-1)', correct / top.correct.length);
}
