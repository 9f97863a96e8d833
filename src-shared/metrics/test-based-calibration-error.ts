import { KnobError } from '../errors';
import { binomialTestPValue } from './binomial-test';
import { metric, type MetricValue } from './metric-value';

/**
 * Test-based calibration error, TCE (Matsubara, Tax, Mudd & Guy 2023, "TCE: a test-based approach
 * to measuring calibration error", UAI): the percentage of predictions that differ significantly
 * from the empirical probability of their bin.
 *
 * 1. Bins ("PAVA-BC", the paper's optimal binning under bin-size constraints): the samples sorted
 *    by score (ties by index, so the binning is deterministic) are pooled as by the pool-adjacent-
 *    violators algorithm on the outcomes, a pool of two adjacent blocks being forced while it is at
 *    most nMin samples, and allowed only while it is at most nMax. The last nMin samples form the
 *    final bin, pooled into the one before it when the pool fits in nMax. (The authors' code pools
 *    it whenever 2 nMin <= nMax, which can exceed nMax; we keep the constraint.)
 * 2. In each bin b with n_b samples and k_b positive outcomes, every prediction p_i of the bin is
 *    tested by the exact two-sided binomial test of k_b ~ Binomial(n_b, p_i) (binomial-test.ts);
 *    it counts as miscalibrated when the p-value is <= alpha.
 * 3. TCE = 100 x (miscalibrated predictions) / n, in [0, 100].
 * Top-label TCE applies this to (confidence, correct).
 */
export interface TceOptions {
  /** Significance level of each test (default 0.05). */
  alpha?: number;
  /** Smallest and largest bin sizes (default 10 and 1000, the paper's). */
  minBinSize?: number;
  maxBinSize?: number;
}

export interface TceBin {
  count: number;
  positives: number;
  /** predictions of the bin whose test rejected */
  rejected: number;
  scoreLo: number;
  scoreHi: number;
  meanScore: number;
  /** quartiles of the bin's predictions, for the box of the TCE diagram */
  scoreQuartiles: [number, number, number];
}

export interface TceResult {
  /** percentage in [0, 100] */
  value: number;
  bins: TceBin[];
  alpha: number;
  minBinSize: number;
  maxBinSize: number;
  identity: string;
}

export function tceIdentity(alpha: number, minBinSize: number, maxBinSize: number): string {
  return (
    `TCE(top-label, PAVA-BC bins of ${minBinSize}..${maxBinSize} samples, exact two-sided binomial ` +
    `test per prediction at alpha ${alpha}, % of predictions rejected; Matsubara et al. 2023)`
  );
}

/** Block sizes of the PAVA-BC binning of outcomes already sorted by score. */
export function pavaBinSizes(sortedOutcomes: ArrayLike<number>, minBinSize: number, maxBinSize: number): number[] {
  const n = sortedOutcomes.length;
  const sizes: number[] = [];
  const sums: number[] = [];
  const headCount = Math.max(0, n - minBinSize);
  for (let i = 0; i < headCount; i++) {
    sizes.push(1);
    sums.push(sortedOutcomes[i]);
    while (sizes.length > 1) {
      const last = sizes.length - 1;
      const pooled = sizes[last - 1] + sizes[last];
      // the earlier block's rate >= the later one's: a violation of monotonicity
      const violates = sums[last - 1] * sizes[last] >= sums[last] * sizes[last - 1];
      if (!(pooled <= minBinSize || (pooled <= maxBinSize && violates))) break;
      sizes[last - 1] = pooled;
      sums[last - 1] += sums[last];
      sizes.pop();
      sums.pop();
    }
  }
  if (n > headCount) {
    let tailSum = 0;
    for (let i = headCount; i < n; i++) tailSum += sortedOutcomes[i];
    const tailSize = n - headCount;
    if (sizes.length > 0 && sizes[sizes.length - 1] + tailSize <= maxBinSize) {
      sizes[sizes.length - 1] += tailSize;
      sums[sums.length - 1] += tailSum;
    } else {
      sizes.push(tailSize);
      sums.push(tailSum);
    }
  }
  return sizes;
}

function quartileOfSorted(sorted: Float64Array, from: number, to: number, q: number): number {
  const position = from + q * (to - from - 1);
  const lo = Math.floor(position);
  const hi = Math.min(to - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (position - lo);
}

/** TCE's default minimum bin size: it needs more samples than this. */
export const TCE_DEFAULT_MIN_BIN_SIZE = 10;

export function testBasedCalibrationError(
  scores: Float64Array,
  outcomes: Uint8Array,
  options: TceOptions = {},
): TceResult {
  const alpha = options.alpha ?? 0.05;
  const minBinSize = options.minBinSize ?? TCE_DEFAULT_MIN_BIN_SIZE;
  const maxBinSize = options.maxBinSize ?? 1000;
  const n = scores.length;
  if (!(alpha > 0 && alpha < 1)) throw new KnobError('INVALID_INPUT', `TCE alpha must be in (0, 1), got ${alpha}`);
  if (!Number.isInteger(minBinSize) || !Number.isInteger(maxBinSize) || minBinSize < 1 || maxBinSize < minBinSize) {
    throw new KnobError(
      'INVALID_INPUT',
      `TCE bin sizes must be integers with 1 <= min <= max, got ${minBinSize} and ${maxBinSize}`,
    );
  }
  if (n <= minBinSize) {
    throw new KnobError('INVALID_INPUT', `TCE needs more than ${minBinSize} samples (the minimum bin size), got ${n}`);
  }
  if (outcomes.length !== n) throw new KnobError('INVALID_INPUT', `${n} scores but ${outcomes.length} outcomes`);
  checkScoresAndOutcomes(scores, outcomes);
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((a, b) => scores[a] - scores[b] || a - b);
  const sortedScores = new Float64Array(n);
  const sortedOutcomes = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    sortedScores[i] = scores[order[i]];
    sortedOutcomes[i] = outcomes[order[i]];
  }
  const bins: TceBin[] = [];
  let rejectedTotal = 0;
  let start = 0;
  for (const size of pavaBinSizes(sortedOutcomes, minBinSize, maxBinSize)) {
    const end = start + size;
    let positives = 0;
    let scoreSum = 0;
    for (let i = start; i < end; i++) {
      positives += sortedOutcomes[i];
      scoreSum += sortedScores[i];
    }
    let rejected = 0;
    let previousScore = Number.NaN;
    let previousRejected = false;
    for (let i = start; i < end; i++) {
      // sorted: equal predictions in a row share one test
      if (sortedScores[i] !== previousScore) {
        previousScore = sortedScores[i];
        previousRejected = binomialTestPValue(positives, size, previousScore) <= alpha;
      }
      if (previousRejected) rejected++;
    }
    rejectedTotal += rejected;
    bins.push({
      count: size,
      positives,
      rejected,
      scoreLo: sortedScores[start],
      scoreHi: sortedScores[end - 1],
      meanScore: scoreSum / size,
      scoreQuartiles: [
        quartileOfSorted(sortedScores, start, end, 0.25),
        quartileOfSorted(sortedScores, start, end, 0.5),
        quartileOfSorted(sortedScores, start, end, 0.75),
      ],
    });
    start = end;
  }
  return {
    value: (100 * rejectedTotal) / n,
    bins,
    alpha,
    minBinSize,
    maxBinSize,
    identity: tceIdentity(alpha, minBinSize, maxBinSize),
  };
}

/** Scores are probabilities in [0, 1] and outcomes 0 or 1; anything else is refused by position. */
export function checkScoresAndOutcomes(scores: Float64Array, outcomes: Uint8Array): void {
  for (let i = 0; i < scores.length; i++) {
    if (!(scores[i] >= 0 && scores[i] <= 1))
      throw new KnobError('INVALID_INPUT', `score ${i} is ${scores[i]}, not a probability in [0, 1]`);
    if (outcomes[i] > 1) throw new KnobError('INVALID_INPUT', `outcome ${i} is ${outcomes[i]}, not 0 or 1`);
  }
}

export function tceMetric(result: TceResult): MetricValue {
  return metric('TCE', result.identity, result.value);
}
