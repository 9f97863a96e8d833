import { metric, type MetricValue } from './metric-value';
import type { TopLabelScores } from './scores';

/**
 * Selective prediction (DEFINITIONS.md 4.5).
 * Order: samples sorted by confidence descending; ties form blocks.
 * - AUROC of confidence for correctness: Mann-Whitney with ties counted 1/2 (= sklearn roc_auc_score).
 *   Undefined when all samples are correct or all wrong: auroc() then returns null (never NaN).
 * - AURC (Geifman et al. 2019) = (1/n) sum_k risk(k), risk(k) = errors among the k most confident / k.
 *   Tie handling (deterministic and order-free): within a block of tied confidences the errors are
 *   spread evenly, i.e. the expected risk over all orders of the block.
 * - E-AURC = AURC - [r + (1 - r) ln(1 - r)], r the overall error rate ((1 - r) ln(1 - r) = 0 at r = 1).
 */
function descendingOrder(confidence: Float64Array): Uint32Array {
  const order = new Uint32Array(confidence.length);
  for (let i = 0; i < order.length; i++) order[i] = i;
  return order.sort((a, b) => confidence[b] - confidence[a] || a - b);
}

export function auroc(top: TopLabelScores): MetricValue | null {
  const { confidence, correct } = top;
  const n = confidence.length;
  const order = descendingOrder(confidence);
  let positives = 0;
  for (let i = 0; i < n; i++) positives += correct[i];
  const negatives = n - positives;
  if (positives === 0 || negatives === 0) return null;
  // Walk from the most confident; for each block of ties count pairs (correct above wrong).
  let wrongSeen = 0;
  let pairs = 0;
  for (let start = 0; start < n; ) {
    let end = start;
    let blockCorrect = 0;
    while (end < n && confidence[order[end]] === confidence[order[start]]) {
      blockCorrect += correct[order[end]];
      end++;
    }
    const blockWrong = end - start - blockCorrect;
    // correct samples in this block rank below all wrong samples seen so far, above all later ones
    pairs += blockCorrect * (negatives - wrongSeen - blockWrong) + 0.5 * blockCorrect * blockWrong;
    wrongSeen += blockWrong;
    start = end;
  }
  return metric('AUROC', 'AUROC(confidence as a score for correctness, Mann-Whitney, ties 1/2)', pairs / (positives * negatives));
}

export function selectiveRisk(top: TopLabelScores): MetricValue[] {
  const { confidence, correct } = top;
  const n = confidence.length;
  const order = descendingOrder(confidence);
  let errorsBefore = 0;
  let area = 0;
  for (let start = 0; start < n; ) {
    let end = start;
    let blockErrors = 0;
    while (end < n && confidence[order[end]] === confidence[order[start]]) {
      blockErrors += 1 - correct[order[end]];
      end++;
    }
    const blockSize = end - start;
    for (let k = start + 1; k <= end; k++) area += (errorsBefore + ((k - start) * blockErrors) / blockSize) / k;
    errorsBefore += blockErrors;
    start = end;
  }
  const aurc = area / n;
  const r = errorsBefore / n;
  const optimal = r + (r < 1 ? (1 - r) * Math.log(1 - r) : 0);
  return [
    metric('AURC', 'AURC(risk-coverage, confidence descending, ties: expected risk over orders within a tie)', aurc),
    metric('E-AURC', 'E-AURC(AURC minus the optimal r + (1 - r) ln(1 - r))', aurc - optimal),
  ];
}
