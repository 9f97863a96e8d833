import { sortNonNegative } from './order-statistics';

/**
 * Scores split by outcome and sorted ascending (linear-time radix sort), the one
 * ordering that AUROC, AURC and the cumulative tests share. Walking both lists together visits the
 * scores in order, with exact ties grouped into blocks, so every result is independent of the
 * samples' original order.
 */
export interface RankedOutcomes {
  positives: Float64Array;
  negatives: Float64Array;
}

export function rankOutcomes(scores: Float64Array, outcomes: ArrayLike<number>): RankedOutcomes {
  let positiveCount = 0;
  for (let i = 0; i < scores.length; i++) positiveCount += outcomes[i] ? 1 : 0;
  const positives = new Float64Array(positiveCount);
  const negatives = new Float64Array(scores.length - positiveCount);
  let p = 0;
  let q = 0;
  for (let i = 0; i < scores.length; i++) {
    if (outcomes[i]) positives[p++] = scores[i];
    else negatives[q++] = scores[i];
  }
  return { positives: sortNonNegative(positives), negatives: sortNonNegative(negatives) };
}

/**
 * Calls `visit(score, positiveCount, negativeCount)` for each distinct score, ascending
 * (descending when `descending`), with how many positives and negatives share it.
 */
export function forEachTieBlock(
  ranked: RankedOutcomes,
  descending: boolean,
  visit: (score: number, positives: number, negatives: number) => void,
): void {
  const { positives, negatives } = ranked;
  const np = positives.length;
  const nn = negatives.length;
  if (!descending) {
    let i = 0;
    let j = 0;
    while (i < np || j < nn) {
      const score = j >= nn || (i < np && positives[i] <= negatives[j]) ? positives[i] : negatives[j];
      let a = 0;
      let b = 0;
      while (i < np && positives[i] === score) {
        i++;
        a++;
      }
      while (j < nn && negatives[j] === score) {
        j++;
        b++;
      }
      visit(score, a, b);
    }
    return;
  }
  let i = np - 1;
  let j = nn - 1;
  while (i >= 0 || j >= 0) {
    const score = j < 0 || (i >= 0 && positives[i] >= negatives[j]) ? positives[i] : negatives[j];
    let a = 0;
    let b = 0;
    while (i >= 0 && positives[i] === score) {
      i--;
      a++;
    }
    while (j >= 0 && negatives[j] === score) {
      j--;
      b++;
    }
    visit(score, a, b);
  }
}
