import { stopIfCancelled, type CancelSignal } from '../cancel-signal';
import { KnobError } from '../errors';
import type { ConformalParams } from './conformal-prediction';

/**
 * Each sample's split-conformal set (DEFINITIONS.md 4.8) as what a view shows of it: whether the
 * set holds the label and how many classes it holds, without the n x K membership matrix
 * (predictionSets), so a 1,000-class recording costs O(n K log K) time and O(n + K) memory.
 * - LAC: {k : 1 - p_k <= q_hat}: one pass over the row.
 * - APS (not randomised): the classes in order of decreasing probability (ties by class index, as
 *   apsScore ranks them) while the probability summed down to each stays <= q_hat: a prefix of the
 *   sorted row, so its size is where the running sum first passes q_hat.
 * The summation order differs from apsScore's by rounding only (a few ulps), which can move a class
 * whose score equals q_hat to within that rounding; q_hat is a calibration sample's score, so a
 * held-out frame meets it exactly with probability 0 for continuous scores.
 */
export interface ConformalSetColumns {
  /** 1 when the sample's set holds its label. */
  covered: Uint8Array;
  /** Classes in the sample's set (0 to K). */
  size: Int32Array;
}

const CANCEL_CHECK_ROWS = 1024;

export function conformalSetColumns(
  params: ConformalParams,
  probabilities: Float64Array,
  labels: Int32Array,
  classCount: number,
  /** Read every CANCEL_CHECK_ROWS rows: a cancelled view stops within them. */
  signal?: CancelSignal,
): ConformalSetColumns {
  const n = labels.length;
  if (probabilities.length !== n * classCount)
    throw new KnobError(
      'INVALID_INPUT',
      `conformal sets: ${probabilities.length} probabilities for ${n} samples of ${classCount} classes`,
    );
  const covered = new Uint8Array(n);
  const size = new Int32Array(n);
  const order = new Int32Array(classCount);
  // one comparator for every row (no closure made per sample): decreasing probability, then index
  let rowOffset = 0;
  const byDecreasingProbability = (a: number, b: number): number =>
    probabilities[rowOffset + b] - probabilities[rowOffset + a] || a - b;
  for (let i = 0; i < n; i++) {
    if (i % CANCEL_CHECK_ROWS === 0) stopIfCancelled(signal, 'the prediction sets were cancelled');
    const offset = i * classCount;
    const y = labels[i];
    if (params.score === 'lac') {
      const threshold = params.qHat;
      let count = 0;
      for (let c = 0; c < classCount; c++) if (1 - probabilities[offset + c] <= threshold) count++;
      size[i] = count;
      covered[i] = 1 - probabilities[offset + y] <= threshold ? 1 : 0;
      continue;
    }
    if (params.randomized)
      throw new KnobError('INVALID_INPUT', 'conformal sets: randomised APS sets are drawn by predictionSets');
    for (let c = 0; c < classCount; c++) order[c] = c;
    rowOffset = offset;
    order.sort(byDecreasingProbability);
    let running = 0;
    let count = 0;
    let holdsLabel = 0;
    for (let r = 0; r < classCount; r++) {
      running += probabilities[offset + order[r]];
      if (running > params.qHat) break;
      count++;
      if (order[r] === y) holdsLabel = 1;
    }
    size[i] = count;
    covered[i] = holdsLabel;
  }
  return { covered, size };
}
