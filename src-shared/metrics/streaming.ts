import { KnobError } from '../errors';
import { locateBin, type EdgeRule } from './bin-location';
import { binningIdentity, equalWidthEdges } from './binning';
import { BinStatistics } from './bin-statistics';
import { binnedMetricsFromStatistics, classwiseMetricsFromStatistics } from './binned-metrics';
import type { BinTotals } from './calibration-error';
import { FixedPointSums } from './fixed-point-sum';
import { metric, type MetricValue } from './metric-value';
import { aurocOfTieBlocks } from './selective';
import { smoothEceFromGrids, splitOntoGrid, type SmoothGrid } from './smooth-ece';

/**
 * Live calibration metrics for streams.
 *
 * Exact part: equal-width top-label and classwise bin statistics (BinStatistics, fixed-point
 * sums), so any split of a stream into accumulators, merged, equals the batch result bit for bit,
 * and a sliding window (which subtracts what leaves it) equals the batch over the window.
 *
 * Sketch part (stated in each value's `approximation`): a fine grid of SKETCH_CELLS equal-width
 * cells of top-label confidence with counts, correct counts and exact confidence sums; equal-mass
 * bins are cut at cell boundaries, SmoothECE puts each cell's mass at the cell's mean confidence,
 * AUROC treats a cell as a block of ties. Each is within a cell width (1/SKETCH_CELLS) of exact.
 */
export const SKETCH_CELLS = 16384;

export interface StreamingOptions {
  classCount: number;
  /** Equal-width bins for the exact metrics (default 15). */
  bins?: number;
  edgeRule?: EdgeRule;
  /** Equal-mass bins cut from the sketch (default 15). */
  massBins?: number;
}

export class CalibrationAccumulator {
  readonly classCount: number;
  readonly bins: number;
  readonly edgeRule: EdgeRule;
  readonly massBins: number;
  readonly topLabel: BinStatistics;
  readonly classwise: BinStatistics[];
  private readonly edges: Float64Array;
  private readonly cellCounts = new Float64Array(SKETCH_CELLS);
  private readonly cellCorrect = new Float64Array(SKETCH_CELLS);
  private readonly cellConfidence = new FixedPointSums(SKETCH_CELLS);

  constructor(options: StreamingOptions) {
    if (!Number.isInteger(options.classCount) || options.classCount < 2) {
      throw new KnobError('INVALID_INPUT', `calibration needs at least two classes, got K = ${options.classCount}`);
    }
    this.classCount = options.classCount;
    this.bins = options.bins ?? 15;
    this.edgeRule = options.edgeRule ?? 'left-closed';
    this.massBins = options.massBins ?? 15;
    this.edges = equalWidthEdges(this.bins);
    const binCount = this.bins + (this.edgeRule === 'one-in-extra-bin' ? 1 : 0);
    this.topLabel = new BinStatistics(binCount);
    this.classwise = Array.from({ length: this.classCount }, () => new BinStatistics(binCount));
  }

  /** Adds (sign 1) or removes (sign -1) one sample: its probability row and its true label. */
  update(probabilities: Float64Array, offset: number, label: number, sign: number): void {
    const k = this.classCount;
    let best = 0;
    let confidence = probabilities[offset];
    for (let c = 0; c < k; c++) {
      const p = probabilities[offset + c];
      if (p > confidence) {
        confidence = p;
        best = c;
      }
      this.classwise[c].update(locateBin(p, this.edges, this.edgeRule), p, label === c ? 1 : 0, sign);
    }
    const correct = best === label ? 1 : 0;
    this.topLabel.update(locateBin(confidence, this.edges, this.edgeRule), confidence, correct, sign);
    const cell = Math.min(SKETCH_CELLS - 1, Math.floor(confidence * SKETCH_CELLS));
    this.cellCounts[cell] += sign;
    this.cellCorrect[cell] += sign * correct;
    this.cellConfidence.add(cell, confidence, sign);
  }

  merge(other: CalibrationAccumulator): void {
    if (other.classCount !== this.classCount || other.bins !== this.bins || other.edgeRule !== this.edgeRule) {
      throw new KnobError('INVALID_INPUT', 'cannot merge accumulators with different classes or bins');
    }
    this.topLabel.merge(other.topLabel);
    this.classwise.forEach((stats, c) => stats.merge(other.classwise[c]));
    for (let i = 0; i < SKETCH_CELLS; i++) {
      this.cellCounts[i] += other.cellCounts[i];
      this.cellCorrect[i] += other.cellCorrect[i];
    }
    this.cellConfidence.merge(other.cellConfidence);
  }

  get sampleCount(): number {
    return this.topLabel.total();
  }

  /** Exact equal-width metrics (identical to the batch metrics of the same samples). */
  exactMetrics(): MetricValue[] {
    const binning = binningIdentity({ scheme: 'equal-width', bins: this.bins, edgeRule: this.edgeRule });
    return [
      ...binnedMetricsFromStatistics(this.topLabel, binning),
      ...classwiseMetricsFromStatistics(this.classwise, binning),
    ];
  }

  /**
   * Accuracy and mean top-label confidence of the accumulated samples, from the exact top-label
   * bin totals (so a sliding window gives the window's exact values); empty when no samples.
   */
  accuracyAndConfidence(scope: string): MetricValue[] {
    const stats = this.topLabel;
    let count = 0;
    let correct = 0;
    let confidence = 0;
    for (let b = 0; b < stats.binCount; b++) {
      const n = stats.counts[b];
      if (n === 0) continue;
      count += n;
      correct += stats.positives[b];
      confidence += stats.meanScore(b) * n;
    }
    if (count === 0) return [];
    return [
      metric('accuracy', `accuracy(top-1, ${scope})`, correct / count),
      metric('mean confidence', `mean top-label confidence(${scope})`, confidence / count),
    ];
  }

  /** Metrics from the confidence sketch, each marked as an approximation. */
  sketchMetrics(): MetricValue[] {
    const note = `from a ${SKETCH_CELLS}-cell confidence sketch, within 1/${SKETCH_CELLS} of exact in confidence`;
    const out: MetricValue[] = [];
    const n = this.sampleCount;
    if (n >= this.massBins) out.push(...this.equalMassFromSketch(note));
    if (n > 0) out.push(smoothEceFromGrids((nodes) => this.smoothGrid(nodes), note).value);
    const roc = this.aurocFromSketch(note);
    if (roc !== null) out.push(roc);
    return out;
  }

  private cellMeanConfidence(cell: number): number {
    return this.cellConfidence.value(cell) / this.cellCounts[cell];
  }

  private equalMassFromSketch(note: string): MetricValue[] {
    const n = this.sampleCount;
    const stats = new BinStatistics(this.massBins);
    let cumulative = 0;
    for (let cell = 0; cell < SKETCH_CELLS; cell++) {
      const count = this.cellCounts[cell];
      if (count === 0) continue;
      const bin = Math.min(this.massBins - 1, Math.floor((cumulative * this.massBins) / n));
      cumulative += count;
      // a whole cell goes to one bin: add its samples as one block at the cell's mean confidence
      const mean = this.cellMeanConfidence(cell);
      const correct = this.cellCorrect[cell];
      for (let i = 0; i < correct; i++) stats.update(bin, mean, 1, 1);
      for (let i = 0; i < count - correct; i++) stats.update(bin, mean, 0, 1);
    }
    const binning = `${this.massBins} equal-mass bins (cut at sketch cells)`;
    return binnedMetricsFromStatistics(stats, binning, note).filter(
      (m) => m.name === 'ECE' || m.name === 'debiased L2-CE',
    );
  }

  private smoothGrid(nodes: number): SmoothGrid {
    const positions: number[] = [];
    const residuals: number[] = [];
    const masses: number[] = [];
    for (let cell = 0; cell < SKETCH_CELLS; cell++) {
      const count = this.cellCounts[cell];
      if (count === 0) continue;
      const mean = this.cellMeanConfidence(cell);
      positions.push(mean);
      residuals.push(count * mean - this.cellCorrect[cell]);
      masses.push(count);
    }
    const residual = new Float64Array(nodes);
    const mass = new Float64Array(nodes);
    splitOntoGrid(Float64Array.from(positions), Float64Array.from(residuals), nodes, residual);
    splitOntoGrid(Float64Array.from(positions), Float64Array.from(masses), nodes, mass);
    return { residual, mass };
  }

  private aurocFromSketch(note: string): MetricValue | null {
    const wrong = new Float64Array(SKETCH_CELLS);
    for (let cell = 0; cell < SKETCH_CELLS; cell++) wrong[cell] = this.cellCounts[cell] - this.cellCorrect[cell];
    return aurocOfTieBlocks(this.cellCorrect, wrong, SKETCH_CELLS, note);
  }
}

/**
 * The last `windowSize` samples, exactly: a ring buffer of probability rows and labels; the
 * sample leaving the window is subtracted (exact, fixed point).
 */
export class SlidingWindowCalibration {
  readonly windowSize: number;
  readonly accumulator: CalibrationAccumulator;
  private readonly rows: Float64Array;
  private readonly labels: Int32Array;
  private next = 0;
  private filled = 0;

  constructor(windowSize: number, options: StreamingOptions) {
    if (!Number.isInteger(windowSize) || windowSize < 1)
      throw new KnobError('INVALID_INPUT', `window size must be a positive integer, got ${windowSize}`);
    this.windowSize = windowSize;
    this.accumulator = new CalibrationAccumulator(options);
    this.rows = new Float64Array(windowSize * options.classCount);
    this.labels = new Int32Array(windowSize);
  }

  push(probabilities: Float64Array, offset: number, label: number): void {
    const k = this.accumulator.classCount;
    const slot = this.next;
    if (this.filled === this.windowSize) this.accumulator.update(this.rows, slot * k, this.labels[slot], -1);
    else this.filled++;
    for (let c = 0; c < k; c++) this.rows[slot * k + c] = probabilities[offset + c];
    this.labels[slot] = label;
    this.accumulator.update(this.rows, slot * k, label, 1);
    this.next = (slot + 1) % this.windowSize;
  }

  get sampleCount(): number {
    return this.filled;
  }
}

/**
 * Exponentially forgetting bin statistics: each new sample multiplies the past by
 * lambda = 2^(-1/halfLife), so a sample's weight halves every `halfLifeSamples` samples.
 * Floating point, not exact; identities say "exponentially weighted".
 */
export class ForgettingBinStatistics implements BinTotals {
  readonly binCount: number;
  readonly counts: Float64Array;
  readonly positives: Float64Array;
  private readonly scoreSums: Float64Array;
  private readonly lambda: number;

  constructor(binCount: number, halfLifeSamples: number) {
    this.binCount = binCount;
    this.counts = new Float64Array(binCount);
    this.positives = new Float64Array(binCount);
    this.scoreSums = new Float64Array(binCount);
    this.lambda = 2 ** (-1 / halfLifeSamples);
  }

  add(bin: number, score: number, outcome: number): void {
    for (let b = 0; b < this.binCount; b++) {
      this.counts[b] *= this.lambda;
      this.positives[b] *= this.lambda;
      this.scoreSums[b] *= this.lambda;
    }
    this.counts[bin] += 1;
    this.positives[bin] += outcome;
    this.scoreSums[bin] += score;
  }

  total(): number {
    let n = 0;
    for (let b = 0; b < this.binCount; b++) n += this.counts[b];
    return n;
  }

  meanScore(bin: number): number {
    return this.scoreSums[bin] / this.counts[bin];
  }

  positiveRate(bin: number): number {
    return this.positives[bin] / this.counts[bin];
  }
}

export class ForgettingCalibration {
  readonly stats: ForgettingBinStatistics;
  private readonly edges: Float64Array;

  constructor(
    readonly halfLifeSamples: number,
    readonly bins = 15,
    readonly edgeRule: EdgeRule = 'left-closed',
  ) {
    this.edges = equalWidthEdges(bins);
    this.stats = new ForgettingBinStatistics(bins + (edgeRule === 'one-in-extra-bin' ? 1 : 0), halfLifeSamples);
  }

  push(confidence: number, correct: number): void {
    this.stats.add(locateBin(confidence, this.edges, this.edgeRule), confidence, correct);
  }

  metrics(): MetricValue[] {
    const binning = `${binningIdentity({ scheme: 'equal-width', bins: this.bins, edgeRule: this.edgeRule })}, exponentially weighted, half-life ${this.halfLifeSamples} samples`;
    return binnedMetricsFromStatistics(this.stats, binning);
  }
}
