import { sortNonNegative } from './order-statistics';

/**
 * Scores with binary outcomes, in ascending score order with exact ties grouped into blocks: the
 * one ordering that AUROC, AURC and the cumulative tests share. Block b holds every sample whose
 * score equals scores[b]: positives[b] with outcome 1, negatives[b] with outcome 0. Built by
 * splitting the samples by outcome, sorting each part (linear-time radix sort) and merging, so
 * every result is independent of the samples' original order. Plain arrays rather than a visitor:
 * the metrics loop over them without closures (whose captured doubles V8 boxes on every update).
 */
export interface RankedOutcomes {
  blockCount: number;
  scores: Float64Array;
  positives: Float64Array;
  negatives: Float64Array;
  positiveTotal: number;
  negativeTotal: number;
}

export function rankOutcomes(scores: Float64Array, outcomes: ArrayLike<number>): RankedOutcomes {
  let positiveTotal = 0;
  for (let i = 0; i < scores.length; i++) positiveTotal += outcomes[i] ? 1 : 0;
  const positiveScores = new Float64Array(positiveTotal);
  const negativeScores = new Float64Array(scores.length - positiveTotal);
  let p = 0;
  let q = 0;
  for (let i = 0; i < scores.length; i++) {
    if (outcomes[i]) positiveScores[p++] = scores[i];
    else negativeScores[q++] = scores[i];
  }
  return mergeIntoTieBlocks(sortNonNegative(positiveScores), sortNonNegative(negativeScores));
}

function mergeIntoTieBlocks(positiveScores: Float64Array, negativeScores: Float64Array): RankedOutcomes {
  const np = positiveScores.length;
  const nn = negativeScores.length;
  const blockScores = new Float64Array(np + nn);
  const positives = new Float64Array(np + nn);
  const negatives = new Float64Array(np + nn);
  let blocks = 0;
  let i = 0;
  let j = 0;
  while (i < np || j < nn) {
    const score = j >= nn || (i < np && positiveScores[i] <= negativeScores[j]) ? positiveScores[i] : negativeScores[j];
    let a = 0;
    let b = 0;
    while (i < np && positiveScores[i] === score) {
      i++;
      a++;
    }
    while (j < nn && negativeScores[j] === score) {
      j++;
      b++;
    }
    blockScores[blocks] = score;
    positives[blocks] = a;
    negatives[blocks] = b;
    blocks++;
  }
  return {
    blockCount: blocks,
    scores: blockScores.subarray(0, blocks),
    positives: positives.subarray(0, blocks),
    negatives: negatives.subarray(0, blocks),
    positiveTotal: np,
    negativeTotal: nn,
  };
}
