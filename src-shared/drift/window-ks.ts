import { NO_TEST, type AlarmStatistic } from './alarm-statistic';
import { countAtMost, countBelow } from './sorted-search';

/**
 * Kolmogorov-Smirnov distance between a sliding window and the reference, at the reference's
 * quantile edges: D = max_b |F_window(e_b) - F_reference(e_b)| over the edges e_b that cut the
 * sorted reference into `bins` equal parts (ties merged). It is the two-sample KS statistic of the
 * signal as the reference's quantile bins see it (never above the exact statistic), kept
 * incrementally: a frame in and a frame out of the window move one count each, so a test costs
 * O(bins) however long the window. The window is tested every `strideFrames` frames once full, and
 * starts empty again after a reset.
 */
export class WindowKs implements AlarmStatistic {
  private readonly edges: Float64Array;
  private readonly referenceCdf: Float64Array;
  private readonly counts: Int32Array;
  private readonly ring: Int32Array;
  private filled = 0;
  private at = 0;
  /** Frames until the next test once the window is full (0: test on this frame). */
  private untilTest = 0;

  constructor(
    reference: Float64Array,
    private readonly windowFrames: number,
    private readonly strideFrames: number,
    bins: number,
    /**
     * The reference in ascending order, when the caller has it: a threshold calibration builds it
     * for each simulated reference from the stream's indices in linear time, where sorting took
     * 2 ms a path (a tenth of a signal's setup).
     */
    sortedReference: Float64Array = Float64Array.from(reference).sort(),
  ) {
    if (!(windowFrames >= 2 && strideFrames >= 1 && bins >= 2))
      throw new RangeError(`window ${windowFrames}, stride ${strideFrames}, bins ${bins}`);
    const sorted = sortedReference;
    const edges: number[] = [];
    for (let b = 1; b < bins; b++) {
      const edge = sorted[Math.min(sorted.length - 1, Math.floor((b * sorted.length) / bins))]!;
      if (edges.length === 0 || edge > edges[edges.length - 1]!) edges.push(edge);
    }
    this.edges = Float64Array.from(edges);
    this.referenceCdf = new Float64Array(edges.length);
    for (let e = 0; e < edges.length; e++) this.referenceCdf[e] = countAtMost(sorted, edges[e]!) / sorted.length;
    this.counts = new Int32Array(edges.length + 1);
    this.ring = new Int32Array(windowFrames);
  }

  /** The bin of x: how many edges lie below it, so a value on an edge counts in F(edge). */
  encode(x: number): number {
    return countBelow(this.edges, x);
  }

  /**
   * The bins (edges.length + 1 of them), in bytes when they fit (the monitor's default 20, and
   * `--bins` up to 1,000 in 16 bits). Ascending values (a calibration's sorted reference) walk the
   * edges once; others bisect.
   */
  codeTable(values: Float64Array): Uint8Array | Uint16Array | Uint32Array {
    const edges = this.edges;
    const n = values.length;
    const out =
      edges.length < 0x100 ? new Uint8Array(n) : edges.length < 0x10000 ? new Uint16Array(n) : new Uint32Array(n);
    let bin = 0;
    let previous = -Infinity;
    for (let i = 0; i < values.length; i++) {
      const x = values[i]!;
      if (x >= previous) while (bin < edges.length && edges[bin]! < x) bin++;
      else bin = countBelow(edges, x);
      out[i] = bin;
      previous = x;
    }
    return out;
  }

  nextEncoded(bin: number): number {
    if (this.filled === this.windowFrames) this.counts[this.ring[this.at]!]!--;
    else this.filled++;
    this.ring[this.at] = bin;
    this.counts[bin]!++;
    if (++this.at === this.windowFrames) this.at = 0;
    if (this.filled < this.windowFrames) return NO_TEST;
    if (this.untilTest-- !== 0) return NO_TEST;
    this.untilTest = this.strideFrames - 1;
    let below = 0;
    let distance = 0;
    for (let e = 0; e < this.edges.length; e++) {
      below += this.counts[e]!;
      distance = Math.max(distance, Math.abs(below / this.windowFrames - this.referenceCdf[e]!));
    }
    return distance;
  }

  reset(): void {
    this.counts.fill(0);
    this.filled = 0;
    this.at = 0;
    this.untilTest = 0;
  }
}

export function windowKsIdentity(windowFrames: number, strideFrames: number, bins: number): string {
  return `KS distance of the last ${windowFrames} frames to the reference at its ${bins}-quantile edges (tied edges merged), tested every ${strideFrames} frames`;
}

/** The windowed test's quantile bins unless told otherwise (`knob monitor --bins`, the desk). */
export const DEFAULT_KS_BINS = 20;
