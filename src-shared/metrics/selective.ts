import { metric, type MetricValue } from './metric-value';
import { rankOutcomes, type RankedOutcomes } from './ranked-outcomes';
import type { TopLabelScores } from './scores';

/**
 * Selective prediction (DEFINITIONS.md 4.5), on samples ordered by confidence with exact ties
 * grouped into blocks (ranked-outcomes.ts).
 * - AUROC of confidence for correctness: Mann-Whitney with ties counted 1/2 (= sklearn
 *   roc_auc_score). Undefined when all samples are right or all wrong: auroc() returns null.
 * - AURC (Geifman et al. 2019) = (1/n) sum_k risk(k), risk(k) = errors among the k most confident / k.
 *   Ties (deterministic and order-free): within a block of tied confidences the errors are spread
 *   evenly, i.e. the expected risk over all orders of the block.
 * - E-AURC = AURC - [r + (1 - r) ln(1 - r)], r the error rate ((1 - r) ln(1 - r) = 0 at r = 1).
 */
export function auroc(
  top: TopLabelScores,
  ranked: RankedOutcomes = rankOutcomes(top.confidence, top.correct),
): MetricValue | null {
  return aurocOfTieBlocks(ranked.positives, ranked.negatives, ranked.blockCount);
}

/**
 * AUROC (Mann-Whitney, ties counted 1/2) from blocks of tied scores in ascending order: block b holds
 * positives[b] correct and negatives[b] wrong samples. Null when every sample is right or every one
 * wrong. `approximation` marks blocks that are coarser than exact ties (a sketch's cells).
 */
export function aurocOfTieBlocks(
  positives: ArrayLike<number>,
  negatives: ArrayLike<number>,
  blockCount: number,
  approximation?: string,
): MetricValue | null {
  let positiveTotal = 0;
  let negativeTotal = 0;
  let negativesBelow = 0;
  let pairs = 0;
  for (let b = 0; b < blockCount; b++) {
    const p = positives[b];
    const q = negatives[b];
    pairs += p * negativesBelow + 0.5 * p * q;
    negativesBelow += q;
    positiveTotal += p;
    negativeTotal += q;
  }
  if (positiveTotal === 0 || negativeTotal === 0) return null;
  return metric(
    'AUROC',
    'AUROC(confidence as a score for correctness, Mann-Whitney, ties 1/2)',
    pairs / (positiveTotal * negativeTotal),
    approximation,
  );
}

export function selectiveRisk(
  top: TopLabelScores,
  ranked: RankedOutcomes = rankOutcomes(top.confidence, top.correct),
): MetricValue[] {
  const n = ranked.positiveTotal + ranked.negativeTotal;
  let seen = 0;
  let errorsBefore = 0;
  let area = 0;
  for (let b = ranked.blockCount - 1; b >= 0; b--) {
    const wrong = ranked.negatives[b];
    const size = ranked.positives[b] + wrong;
    for (let k = 1; k <= size; k++) area += (errorsBefore + (k * wrong) / size) / (seen + k);
    seen += size;
    errorsBefore += wrong;
  }
  const aurc = area / n;
  const r = errorsBefore / n;
  const optimal = r + (r < 1 ? (1 - r) * Math.log(1 - r) : 0);
  return [
    metric('AURC', 'AURC(risk-coverage, confidence descending, ties: expected risk over orders within a tie)', aurc),
    metric('E-AURC', 'E-AURC(AURC minus the optimal r + (1 - r) ln(1 - r))', aurc - optimal),
  ];
}
