import {
  FIXED_POINT_UPDATES_BETWEEN_CARRIES,
  LIMBS_PER_SUM,
  addFixedPoint,
  fixedPointValue,
  normalizeFixedPoint,
} from './fixed-point-sum';

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
  private readonly scoreLimbs: Float64Array;
  private updatesSinceCarry = 0;

  constructor(binCount: number) {
    this.binCount = binCount;
    this.counts = new Float64Array(binCount);
    this.positives = new Float64Array(binCount);
    this.scoreLimbs = new Float64Array(binCount * LIMBS_PER_SUM);
  }

  /** Adds (sign = 1) or removes (sign = -1) one sample with score in [0, 1] and outcome 0 or 1. */
  update(bin: number, score: number, outcome: number, sign: number): void {
    this.counts[bin] += sign;
    this.positives[bin] += sign * outcome;
    addFixedPoint(this.scoreLimbs, bin * LIMBS_PER_SUM, score, sign);
    if (++this.updatesSinceCarry === FIXED_POINT_UPDATES_BETWEEN_CARRIES) this.carry();
  }

  /** Adds samples [from, to) (at most 2^20 of them) in one pass. */
  addBlock(binOf: Int32Array, scores: Float64Array, outcomes: ArrayLike<number>, from: number, to: number): void {
    this.carry();
    const counts = this.counts;
    const positives = this.positives;
    const limbs = this.scoreLimbs;
    for (let i = from; i < to; i++) {
      const bin = binOf[i];
      counts[bin] += 1;
      positives[bin] += outcomes[i];
      const a = scores[i] * 4294967296;
      const l0 = Math.floor(a);
      const r1 = (a - l0) * 4294967296;
      const l1 = Math.floor(r1);
      const o = bin * LIMBS_PER_SUM;
      limbs[o] += l0;
      limbs[o + 1] += l1;
      limbs[o + 2] += Math.floor((r1 - l1) * 4294967296);
    }
    this.carry();
  }

  merge(other: BinStatistics): void {
    if (other.binCount !== this.binCount) throw new Error(`cannot merge ${other.binCount} bins into ${this.binCount}`);
    this.carry();
    other.carry();
    for (let b = 0; b < this.binCount; b++) {
      this.counts[b] += other.counts[b];
      this.positives[b] += other.positives[b];
    }
    for (let i = 0; i < this.scoreLimbs.length; i++) this.scoreLimbs[i] += other.scoreLimbs[i];
    this.carry();
  }

  clear(): void {
    this.counts.fill(0);
    this.positives.fill(0);
    this.scoreLimbs.fill(0);
    this.updatesSinceCarry = 0;
  }

  total(): number {
    let n = 0;
    for (let b = 0; b < this.binCount; b++) n += this.counts[b];
    return n;
  }

  scoreSum(bin: number): number {
    return fixedPointValue(this.scoreLimbs, bin * LIMBS_PER_SUM);
  }

  /** Mean score (confidence) of a bin; NaN for an empty bin (callers skip empty bins). */
  meanScore(bin: number): number {
    return this.scoreSum(bin) / this.counts[bin];
  }

  /** Fraction of positive outcomes (accuracy) of a bin. */
  positiveRate(bin: number): number {
    return this.positives[bin] / this.counts[bin];
  }

  private carry(): void {
    for (let b = 0; b < this.binCount; b++) normalizeFixedPoint(this.scoreLimbs, b * LIMBS_PER_SUM);
    this.updatesSinceCarry = 0;
  }
}

/**
 * Statistics of (score, outcome) pairs under a precomputed bin assignment: the batch path, the
 * same fixed-point arithmetic as update() in one tight loop.
 */
export function binStatisticsOf(binOf: Int32Array, binCount: number, scores: Float64Array, outcomes: ArrayLike<number>): BinStatistics {
  const stats = new BinStatistics(binCount);
  for (let start = 0; start < binOf.length; start += FIXED_POINT_UPDATES_BETWEEN_CARRIES) {
    stats.addBlock(binOf, scores, outcomes, start, Math.min(binOf.length, start + FIXED_POINT_UPDATES_BETWEEN_CARRIES));
  }
  return stats;
}
