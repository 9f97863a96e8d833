import { binCountOf, binTableFor, type BinningSpec } from './binning';
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

/** Samples located and added per chunk: the chunk's bin indices stay in the first-level cache. */
const LOCATE_CHUNK = 4096;

/**
 * Statistics of (score, outcome) pairs binned under `spec` (the batch path): located through the
 * bin table and added chunk by chunk, with no bin index array the size of the input.
 */
export function binnedStatistics(scores: Float64Array, outcomes: Uint8Array, spec: BinningSpec): BinStatistics {
  const table = binTableFor(scores, spec);
  const stats = new BinStatistics(binCountOf(spec));
  const binOf = new Int32Array(LOCATE_CHUNK);
  for (let start = 0; start < scores.length; start += LOCATE_CHUNK) {
    const end = Math.min(scores.length, start + LOCATE_CHUNK);
    table.locateRangeInto(scores, start, end, binOf);
    stats.addBlock(binOf, scores, outcomes, start, end);
  }
  return stats;
}
