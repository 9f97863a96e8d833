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
   * Adds samples [from, to) (at most 2^20) in one pass: the same fixed-point split as
   * FixedPointSums.add, written out so the loop touches only typed arrays.
   */
  addBlock(binOf: Int32Array, scores: Float64Array, outcomes: Uint8Array, from: number, to: number): void {
    const counts = this.counts;
    const positives = this.positives;
    const high = this.scoreSums.high;
    const middle = this.scoreSums.middle;
    const low = this.scoreSums.low;
    // A local copy: an imported binding read in the loop costs a getter call per read under
    // CommonJS transpilation (tsx, vitest), which made this loop 4x slower.
    const limb = LIMB;
    for (let i = from; i < to; i++) {
      const bin = binOf[i];
      counts[bin] += 1;
      positives[bin] += outcomes[i];
      const a = scores[i] * limb;
      const l0 = Math.floor(a);
      const r1 = (a - l0) * limb;
      const l1 = Math.floor(r1);
      high[bin] += l0;
      middle[bin] += l1;
      low[bin] += Math.floor((r1 - l1) * limb);
    }
    this.scoreSums.noteUpdates(to - from);
  }

  merge(other: BinStatistics): void {
    if (other.binCount !== this.binCount) throw new Error(`cannot merge ${other.binCount} bins into ${this.binCount}`);
    for (let b = 0; b < this.binCount; b++) {
      this.counts[b] += other.counts[b];
      this.positives[b] += other.positives[b];
    }
    this.scoreSums.merge(other.scoreSums);
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

/** Statistics of (score, outcome) pairs under a precomputed bin assignment (the batch path). */
export function binStatisticsOf(binOf: Int32Array, binCount: number, scores: Float64Array, outcomes: Uint8Array): BinStatistics {
  const stats = new BinStatistics(binCount);
  for (let start = 0; start < binOf.length; start += FIXED_POINT_UPDATES_BETWEEN_CARRIES) {
    stats.addBlock(binOf, scores, outcomes, start, Math.min(binOf.length, start + FIXED_POINT_UPDATES_BETWEEN_CARRIES));
  }
  return stats;
}
