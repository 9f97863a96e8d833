import { FIXED_POINT_UPDATES_BETWEEN_CARRIES, FixedPointSums, LIMB } from './fixed-point-sum';

/**
 * Per-bin sufficient statistics of binned calibration metrics: count n_b, sum of scores (exact,
 * fixed point) and number of positive outcomes (an integer). Every equal-width metric is a function
 * of these alone, and they add exactly, so batch, streaming, merged and windowed results agree bit
 * for bit.
 */
export class BinStatistics {
  readonly binCount: number;
  readonly counts: Float64Array;
  readonly positives: Float64Array;
  private readonly scoreSums: FixedPointSums;

  constructor(binCount: number) {
    this.binCount = binCount;
    this.counts = new Float64Array(binCount);
    this.positives = new Float64Array(binCount);
    this.scoreSums = new FixedPointSums(binCount);
  }

  /** Adds (sign = 1) or removes (sign = -1) one sample with score in [0, 1] and outcome 0 or 1. */
  update(bin: number, score: number, outcome: number, sign: number): void {
    this.counts[bin] += sign;
    this.positives[bin] += sign * outcome;
    this.scoreSums.add(bin, score, sign);
  }

  /**
   * Adds samples [from, to) (at most 2^20), sample i in bin binOf[i - from], in one pass: the
   * same fixed-point split as FixedPointSums.add, written out so the loop touches only typed arrays.
   */
  addBlock(binOf: Int32Array, scores: Float64Array, outcomes: Uint8Array, from: number, to: number): void {
    const counts = this.counts;
    const positives = this.positives;
    const high = this.scoreSums.high;
    const low = this.scoreSums.low;
    // A local copy: an imported binding read in the loop is re-read (and TDZ-checked) per value,
    // which made this loop 4x slower.
    const limb = LIMB;
    for (let i = from; i < to; i++) {
      const bin = binOf[i - from];
      counts[bin] += 1;
      positives[bin] += outcomes[i];
      const a = scores[i] * limb;
      const l0 = Math.floor(a);
      high[bin] += l0;
      low[bin] += Math.floor((a - l0) * limb);
    }
    this.scoreSums.noteUpdates(to - from);
  }

  /**
   * Adds every sample i counts[i] times (a resample's draws, counted), in one pass in order: the
   * same fixed-point limbs as addBlock, times the count, so the sums are those of adding each draw
   * on its own. A count of 0 adds zeros (no branch to mispredict on the third of values a bootstrap
   * resample leaves out). A carry runs once 2^20 draws were added since the last. Exact while the
   * resample has fewer than 2^21 draws (a count times a limb, and the high limb, stay below 2^53),
   * the bound binStatisticsOf's sums have too.
   */
  addCounted(binOf: Int32Array, counts: Int32Array, scores: Float64Array, outcomes: Uint8Array): void {
    const sampleCounts = this.counts;
    const positives = this.positives;
    const high = this.scoreSums.high;
    const low = this.scoreSums.low;
    const limb = LIMB; // a local copy, as in addBlock
    this.scoreSums.carry();
    let draws = 0; // since the last carry
    for (let i = 0; i < counts.length; i++) {
      if (draws >= FIXED_POINT_UPDATES_BETWEEN_CARRIES) {
        this.scoreSums.carry();
        draws = 0;
      }
      const count = counts[i]!;
      const bin = binOf[i]!;
      const a = scores[i]! * limb;
      const l0 = Math.floor(a);
      sampleCounts[bin]! += count;
      positives[bin]! += count * outcomes[i]!;
      high[bin]! += count * l0;
      low[bin]! += count * Math.floor((a - l0) * limb);
      draws += count;
    }
    this.scoreSums.noteUpdates(draws);
  }

  merge(other: BinStatistics): void {
    if (other.binCount !== this.binCount) throw new Error(`cannot merge ${other.binCount} bins into ${this.binCount}`);
    for (let b = 0; b < this.binCount; b++) {
      this.counts[b] += other.counts[b];
      this.positives[b] += other.positives[b];
    }
    this.scoreSums.merge(other.scoreSums);
  }

  /** A copy of bins [start, start + binCount) as statistics of their own. */
  section(start: number, binCount: number): BinStatistics {
    const out = new BinStatistics(binCount);
    const end = start + binCount;
    out.counts.set(this.counts.subarray(start, end));
    out.positives.set(this.positives.subarray(start, end));
    this.scoreSums.carry();
    out.scoreSums.high.set(this.scoreSums.high.subarray(start, end));
    out.scoreSums.low.set(this.scoreSums.low.subarray(start, end));
    return out;
  }

  /** The limb arrays, for loops that add many samples at once (then noteUpdates). */
  get scoreLimbs(): { high: Float64Array; low: Float64Array } {
    return this.scoreSums;
  }

  /** Tells the statistics that `count` samples were added directly to the arrays. */
  noteUpdates(count: number): void {
    this.scoreSums.noteUpdates(count);
  }

  clear(): void {
    this.counts.fill(0);
    this.positives.fill(0);
    this.scoreSums.clear();
  }

  total(): number {
    let n = 0;
    for (let b = 0; b < this.binCount; b++) n += this.counts[b];
    return n;
  }

  scoreSum(bin: number): number {
    return this.scoreSums.value(bin);
  }

  /** Mean score (confidence) of a bin; NaN for an empty bin (callers skip empty bins). */
  meanScore(bin: number): number {
    return this.scoreSums.value(bin) / this.counts[bin];
  }

  /** Fraction of positive outcomes (accuracy) of a bin. */
  positiveRate(bin: number): number {
    return this.positives[bin] / this.counts[bin];
  }
}

/** Statistics of (score, outcome) pairs under a precomputed bin assignment. */
export function binStatisticsOf(
  binOf: Int32Array,
  binCount: number,
  scores: Float64Array,
  outcomes: Uint8Array,
): BinStatistics {
  const stats = new BinStatistics(binCount);
  for (let start = 0; start < binOf.length; start += FIXED_POINT_UPDATES_BETWEEN_CARRIES) {
    const end = Math.min(binOf.length, start + FIXED_POINT_UPDATES_BETWEEN_CARRIES);
    stats.addBlock(binOf.subarray(start, end), scores, outcomes, start, end);
  }
  return stats;
}
