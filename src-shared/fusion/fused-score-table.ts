import { clampGate } from './convex-fusion';
import { logExponentialSeries, writeExponentialSeries } from './exponential-series';
import { GrowingInts, GrowingValues } from './growing-arrays';
import type { LogitArray } from './logits';

/**
 * What a knob turn needs of the fused output, per frame, in O(1) whatever the class count K
 * (issue 29). The fused logits are linear in the gate: z_k(g) = (1 - g) zs_k + g zd_k
 * (convex-fusion.ts), divided by a temperature t when the output is temperature-scaled. So, per
 * frame, once:
 *  - the candidates for top-1: every class whose line comes within a rounding slack of the upper
 *    envelope max_k z_k(g) somewhere on [0, 1]. z_k - max_j z_j is concave and piecewise linear, so
 *    it is largest at g = 0, g = 1 or a breakpoint of the envelope; the envelope is walked from
 *    g = 0 (at each step the next line to overtake it), and every class that can come near the
 *    envelope (writeCandidates) is checked at every vertex.
 *    At a knob turn the top-1 is the first maximum of the candidates' fused logits, computed with
 *    the replay's own arithmetic, so it is the replay's top-1 (a line more than the slack below the
 *    envelope cannot be the first maximum however the rounding falls).
 *  - log sum_k exp(z_k(g)) = b + g s + log T(g) with b = max_k zs_k / t, s = min_k (zd_k - zs_k) / t,
 *    T(g) = sum_k w_k exp(g x_k), w_k = exp(zs_k / t - b) <= 1 and x_k = (zd_k - zs_k) / t - s >= 0,
 *    as an exponential series to a relative error below 2e-13 (exponential-series.ts; T >= 1
 *    because the class of b has w = 1). And T2(g) = sum_k w_k^2 exp(2 g x_k), since sum_k p_k^2 = T2 / T^2.
 * Then at any g: top-label confidence exp(z_top - L), NLL L - z_y and the Brier term
 * 1 - 2 exp(z_y - L) + T2 / T^2, each equal to the full-vector replay's within 1e-12 (tested for
 * K from 2 to 1000); the labels are read at evaluation, so a label given later needs no rebuild.
 * A frame costs a few hundred stored values (the series' length grows with the spread of
 * zd - zs, not with K), against 2 K logits.
 */

/** Candidates within this slack (relative to the row's largest |logit|) of the envelope are kept. */
const CANDIDATE_SLACK = 1e-10;

/** The two branches' logits, row-major (row i at [i K, (i + 1) K)). */
export interface BranchLogits {
  zStatic: LogitArray;
  zDyn: LogitArray;
  classCount: number;
}

/** The label's logit in each branch, per scored frame (what NLL and Brier need besides the table). */
export interface LabelLogits {
  zStatic: Float64Array;
  zDyn: Float64Array;
}

/** The label logits of logit rows `rows` with labels `labels` (one per row listed). */
export function labelLogitsOf(logits: BranchLogits, rows: Int32Array, labels: Int32Array): LabelLogits {
  const zStatic = new Float64Array(rows.length);
  const zDyn = new Float64Array(rows.length);
  for (let j = 0; j < rows.length; j++) {
    const at = rows[j]! * logits.classCount + labels[j]!;
    zStatic[j] = logits.zStatic[at]!;
    zDyn[j] = logits.zDyn[at]!;
  }
  return { zStatic, zDyn };
}

/** Per-frame top-label pairs, NLL and Brier terms (the metric suite's row outputs). */
export interface FusedFrameScores {
  confidence: Float64Array;
  predicted: Int32Array;
  correct: Uint8Array;
  sampleNll: Float64Array;
  sampleBrier: Float64Array;
}

type Floats = Float64Array<ArrayBufferLike>;
type Ints = Int32Array<ArrayBufferLike>;

/** A table's columns (FusedScoreTable.parts, FusedScoreTable.merge). */
export interface FusedScoreTableParts {
  /** Whether the series hold T2 (the Brier terms') after T. */
  squares: boolean;
  rowOf: Ints;
  base: Floats;
  slope: Floats;
  seriesAt: Floats;
  candidateEnd: Ints;
  candidates: Ints;
  candidateStatic: Floats;
  candidateDyn: Floats;
  series: Floats;
}

/** What scoresInto computes besides the top-label pairs (each costs a little more per entry). */
const ALL_PARTS = { nll: true, brier: true };

export class FusedScoreTable {
  readonly classCount: number;
  /** The output is the fused logits times this (1 / temperature; 1 for the fused output as it is). */
  readonly inverseTemperature: number;
  /** Whether the table holds T2, which the Brier terms need. */
  readonly squares: boolean;
  private entries = 0;
  /** Entry j summarises logit row rowOf[j]. */
  private rowOf: Ints = new Int32Array(256);
  private base: Floats = new Float64Array(256);
  private slope: Floats = new Float64Array(256);
  private seriesAt: Floats = new Float64Array(256);
  private candidateEnd: Ints = new Int32Array(256);
  private candidates = new GrowingInts();
  /** The candidates' logits of both branches (a knob turn reads these, not the K-wide rows). */
  private candidateStatic = new GrowingValues();
  private candidateDyn = new GrowingValues();
  private series = new GrowingValues();
  // scratch, K long
  private readonly logWeights: Float64Array;
  private readonly exponents: Float64Array;
  private readonly marks: Uint8Array;
  /** The classes that can come near the envelope, ascending (writeCandidates). */
  private readonly near: Int32Array;
  private readonly next = { index: 0 };
  /** sum_k p_k^2 at the frame and gate of the last logSumExp(..., true). */
  private lastSumSquares = 0;
  /** The fused output logit of the top-1 found by the last topOf. */
  private lastTopLogit = 0;

  /**
   * `squares`: keep T2 too, for the Brier terms (it costs about as much again as the rest; a table
   * without it answers everything else).
   */
  constructor(classCount: number, temperature = 1, squares = true) {
    this.classCount = classCount;
    this.inverseTemperature = 1 / temperature;
    this.squares = squares;
    this.logWeights = new Float64Array(classCount);
    this.exponents = new Float64Array(classCount);
    this.marks = new Uint8Array(classCount);
    this.near = new Int32Array(classCount);
  }

  /** Entries so far: one per logit row summarised, in the order they were added. */
  get entryCount(): number {
    return this.entries;
  }

  /** Stored values per entry so far, on average (what the table costs against 2 K logits). */
  get valuesPerEntry(): number {
    return this.entries === 0 ? 0 : (this.series.length + 3 * this.candidates.length + 5 * this.entries) / this.entries;
  }

  /**
   * Appends entries for logit rows `rows` (an increasing list), or for rows [entryCount, to) when
   * given a number: a table of a growing recording is extended to its new length, entry = frame.
   */
  extend(logits: BranchLogits, rows: Int32Array | number): void {
    if (logits.classCount !== this.classCount)
      throw new Error(`the table holds ${this.classCount} classes, the logits have ${logits.classCount}`);
    const count = typeof rows === 'number' ? Math.max(0, rows - this.entries) : rows.length;
    const first = this.entries;
    this.ensureEntries(first + count);
    for (let j = 0; j < count; j++) {
      const row = typeof rows === 'number' ? first + j : rows[j]!;
      this.rowOf[first + j] = row;
      this.summarise(logits, first + j, row);
    }
    this.entries = first + count;
  }

  /**
   * The table's columns, views trimmed to what it holds (to send to another thread, or to merge):
   * a table in shared memory sends views of the one copy.
   */
  parts(): FusedScoreTableParts {
    const n = this.entries;
    return {
      squares: this.squares,
      rowOf: this.rowOf.subarray(0, n),
      base: this.base.subarray(0, n),
      slope: this.slope.subarray(0, n),
      seriesAt: this.seriesAt.subarray(0, n),
      candidateEnd: this.candidateEnd.subarray(0, n),
      candidates: this.candidates.values().subarray(0, this.candidates.length),
      candidateStatic: this.candidateStatic.values().subarray(0, this.candidateStatic.length),
      candidateDyn: this.candidateDyn.values().subarray(0, this.candidateDyn.length),
      series: this.series.values().subarray(0, this.series.length),
    };
  }

  /**
   * One table of several tables' parts, in order (each built by a thread over its share of the
   * rows), with its columns in memory `allocate` gives (a SharedArrayBuffer, so every thread reads
   * one copy).
   */
  static merge(
    classCount: number,
    temperature: number,
    parts: FusedScoreTableParts[],
    allocate: (bytes: number) => ArrayBufferLike = (bytes) => new ArrayBuffer(bytes),
  ): FusedScoreTable {
    const total = (key: Exclude<keyof FusedScoreTableParts, 'squares'>) =>
      parts.reduce((sum, p) => sum + p[key].length, 0);
    const floats = (count: number) => new Float64Array(allocate(8 * count));
    const ints = (count: number) => new Int32Array(allocate(4 * count));
    const entries = total('rowOf');
    const squares = parts[0]?.squares ?? true;
    if (parts.some((p) => p.squares !== squares)) throw new Error('tables with and without squares do not merge');
    const merged = {
      squares,
      rowOf: ints(entries),
      base: floats(entries),
      slope: floats(entries),
      seriesAt: floats(entries),
      candidateEnd: ints(entries),
      candidates: ints(total('candidates')),
      candidateStatic: floats(total('candidateStatic')),
      candidateDyn: floats(total('candidateDyn')),
      series: floats(total('series')),
    };
    let entry = 0;
    let candidate = 0;
    let value = 0;
    for (const part of parts) {
      const n = part.rowOf.length;
      merged.rowOf.set(part.rowOf, entry);
      merged.base.set(part.base, entry);
      merged.slope.set(part.slope, entry);
      for (let j = 0; j < n; j++) {
        merged.seriesAt[entry + j] = part.seriesAt[j]! + value;
        merged.candidateEnd[entry + j] = part.candidateEnd[j]! + candidate;
      }
      merged.candidates.set(part.candidates, candidate);
      merged.candidateStatic.set(part.candidateStatic, candidate);
      merged.candidateDyn.set(part.candidateDyn, candidate);
      merged.series.set(part.series, value);
      entry += n;
      candidate += part.candidates.length;
      value += part.series.length;
    }
    return FusedScoreTable.wrap(classCount, temperature, merged);
  }

  /** A table over `parts` as they are (no copy: shared memory stays shared). */
  static wrap(classCount: number, temperature: number, parts: FusedScoreTableParts): FusedScoreTable {
    const table = new FusedScoreTable(classCount, temperature, parts.squares);
    table.entries = parts.rowOf.length;
    table.rowOf = parts.rowOf;
    table.base = parts.base;
    table.slope = parts.slope;
    table.seriesAt = parts.seriesAt;
    table.candidateEnd = parts.candidateEnd;
    table.candidates = new GrowingInts(parts.candidates, parts.candidates.length);
    table.candidateStatic = new GrowingValues(parts.candidateStatic, parts.candidateStatic.length);
    table.candidateDyn = new GrowingValues(parts.candidateDyn, parts.candidateDyn.length);
    table.series = new GrowingValues(parts.series, parts.series.length);
    return table;
  }

  /**
   * Top-1 and its probability of entries [from, to) at the gate values `g`, as the replay writes
   * them (fuseTop1Into); `g` and the outputs are indexed by logit row less `rowOffset` (a window
   * of the recording starting at that row).
   */
  topInto(g: Float64Array, from: number, to: number, top1: Int32Array, confidence: Float64Array, rowOffset = 0): void {
    for (let j = from; j < to; j++) {
      const at = this.rowOf[j]! - rowOffset;
      const gate = clampGate(g[at]!);
      top1[at] = this.topOf(j, gate);
      confidence[at] = Math.exp(this.lastTopLogit - this.logSumExp(j, gate, false));
    }
  }

  /**
   * The metric suite's row outputs (scoreRowsInto's) of the table's entries `entries`, at the gate
   * values `g` (indexed by logit row less `rowOffset`), into position j of `out` for entries[j]; `labels` and
   * `labelLogits` are position j's label and its two branches' logits (labelLogitsOf), so no K-wide
   * row is read.
   */
  scoresInto(
    labelLogits: LabelLogits,
    g: Float64Array,
    entries: Int32Array,
    labels: Int32Array,
    out: FusedFrameScores,
    parts: { nll: boolean; brier: boolean } = ALL_PARTS,
    rowOffset = 0,
  ): void {
    const withLabelLogit = parts.nll || parts.brier;
    if (parts.brier && !this.squares) throw new Error('Brier terms need a table built with squares');
    const scale = this.inverseTemperature;
    for (let j = 0; j < entries.length; j++) {
      const entry = entries[j]!;
      const gate = clampGate(g[this.rowOf[entry]! - rowOffset]!);
      const best = this.topOf(entry, gate);
      const lse = this.logSumExp(entry, gate, parts.brier);
      out.confidence[j] = Math.exp(this.lastTopLogit - lse);
      out.predicted[j] = best;
      out.correct[j] = best === labels[j] ? 1 : 0;
      if (!withLabelLogit) continue;
      let labelLogit = (1 - gate) * labelLogits.zStatic[j]! + gate * labelLogits.zDyn[j]!;
      if (scale !== 1) labelLogit *= scale;
      out.sampleNll[j] = lse - labelLogit;
      if (parts.brier) out.sampleBrier[j] = 1 - 2 * Math.exp(labelLogit - lse) + this.lastSumSquares;
    }
  }

  /**
   * L(g) = log sum_k exp(z_k(g)) of entry i; with `squares`, sum_k p_k^2 = T2(g) / T(g)^2 too, into
   * lastSumSquares (T2's series follows T's, with the exponents doubled: evaluated at the same g).
   */
  private logSumExp(i: number, gate: number, squares: boolean): number {
    const values = this.series.values();
    const logT = logExponentialSeries(values, this.seriesAt[i]!, gate, this.next);
    if (squares)
      this.lastSumSquares = Math.exp(logExponentialSeries(values, this.next.index, gate, this.next) - 2 * logT);
    return this.base[i]! + gate * this.slope[i]! + logT;
  }

  /**
   * Entry j's top-1 at `gate` and its fused output logit (into lastTopLogit): the first maximum
   * among its candidates (ascending), with the replay's arithmetic on their stored logits.
   */
  private topOf(j: number, gate: number): number {
    const classes = this.candidates.values();
    const zs = this.candidateStatic.values();
    const zd = this.candidateDyn.values();
    const from = j === 0 ? 0 : this.candidateEnd[j - 1]!;
    const to = this.candidateEnd[j]!;
    const keep = 1 - gate;
    const scale = this.inverseTemperature;
    let best = classes[from]!;
    let max = keep * zs[from]! + gate * zd[from]!;
    if (scale !== 1) max *= scale;
    for (let c = from + 1; c < to; c++) {
      let z = keep * zs[c]! + gate * zd[c]!;
      if (scale !== 1) z *= scale;
      if (z > max) {
        max = z;
        best = classes[c]!;
      }
    }
    this.lastTopLogit = max;
    return best;
  }

  private ensureEntries(count: number): void {
    if (count <= this.base.length) return;
    const size = Math.max(count, this.base.length * 2);
    const grow = <T extends Floats | Ints>(array: T, make: (n: number) => T): T => {
      const grown = make(size);
      grown.set(array);
      return grown;
    };
    this.rowOf = grow(this.rowOf, (n) => new Int32Array(n));
    this.base = grow(this.base, (n) => new Float64Array(n));
    this.slope = grow(this.slope, (n) => new Float64Array(n));
    this.seriesAt = grow(this.seriesAt, (n) => new Float64Array(n));
    this.candidateEnd = grow(this.candidateEnd, (n) => new Int32Array(n));
  }

  /** Entry j: the summary of logit row `row`. */
  private summarise(logits: BranchLogits, j: number, row: number): void {
    const k = this.classCount;
    const offset = row * k;
    const { zStatic, zDyn } = logits;
    this.writeCandidates(zStatic, zDyn, offset);
    this.candidateEnd[j] = this.candidates.length;
    const t = this.inverseTemperature;
    let base = -Infinity;
    let slope = Infinity;
    for (let c = 0; c < k; c++) {
      const s = zStatic[offset + c]! * t;
      const d = (zDyn[offset + c]! - zStatic[offset + c]!) * t;
      if (s > base) base = s;
      if (d < slope) slope = d;
    }
    const { logWeights, exponents } = this;
    for (let c = 0; c < k; c++) {
      logWeights[c] = zStatic[offset + c]! * t - base;
      exponents[c] = (zDyn[offset + c]! - zStatic[offset + c]!) * t - slope;
    }
    this.base[j] = base;
    this.slope[j] = slope;
    this.seriesAt[j] = this.series.length;
    writeExponentialSeries(logWeights, exponents, k, 1, this.series);
    if (!this.squares) return;
    for (let c = 0; c < k; c++) {
      logWeights[c] *= 2;
      exponents[c] *= 2;
    }
    writeExponentialSeries(logWeights, exponents, k, 1, this.series);
  }

  /** The top-1 candidates of one row, ascending, appended to `candidates`. */
  private writeCandidates(zStatic: LogitArray, zDyn: LogitArray, offset: number): void {
    const k = this.classCount;
    const { marks, near } = this;
    let scale = 0;
    // the envelope is at least max_k min(zs_k, zd_k) everywhere on [0, 1] (a line is above its lower end)
    let envelopeFloor = -Infinity;
    for (let c = 0; c < k; c++) {
      const a = zStatic[offset + c]!;
      const b = zDyn[offset + c]!;
      const lower = a < b ? a : b;
      const upper = a < b ? b : a;
      if (upper > scale) scale = upper;
      if (-lower > scale) scale = -lower;
      if (lower > envelopeFloor) envelopeFloor = lower;
    }
    const slack = CANDIDATE_SLACK * (1 + scale);
    // A class whose line's top, max(zs, zd), is more than twice the slack below that floor is more
    // than the slack below the envelope everywhere: it is never marked, never overtakes the envelope
    // (it would meet it) and is never the first maximum at g = 0. The walk below reads the rest.
    const farBelow = envelopeFloor - 2 * slack;
    let nearCount = 0;
    for (let c = 0; c < k; c++) {
      if (zStatic[offset + c]! >= farBelow || zDyn[offset + c]! >= farBelow) {
        near[nearCount++] = c;
        marks[c] = 0;
      }
    }
    // walk the upper envelope from g = 0: at each vertex, the line that overtakes it first
    let vertex = 0;
    let on = this.argmaxAt(zStatic, zDyn, offset, 0, nearCount);
    this.markNear(zStatic, zDyn, offset, 0, slack, nearCount);
    for (let step = 0; step < nearCount; step++) {
      const slopeOn = zDyn[offset + on]! - zStatic[offset + on]!;
      const valueOn = zStatic[offset + on]! + vertex * slopeOn;
      let next = Infinity;
      let overtaker = -1;
      let overtakerSlope = -Infinity;
      for (let i = 0; i < nearCount; i++) {
        const c = near[i]!;
        const slopeC = zDyn[offset + c]! - zStatic[offset + c]!;
        if (!(slopeC > slopeOn)) continue;
        const crossing = vertex + (valueOn - (zStatic[offset + c]! + vertex * slopeC)) / (slopeC - slopeOn);
        // at a shared crossing the steepest line stays on top after it
        if (crossing < next || (crossing === next && slopeC > overtakerSlope)) {
          next = crossing;
          overtaker = c;
          overtakerSlope = slopeC;
        }
      }
      if (overtaker < 0 || next >= 1) break;
      vertex = Math.max(vertex, next);
      on = overtaker;
      this.markNear(zStatic, zDyn, offset, vertex, slack, nearCount);
    }
    this.markNear(zStatic, zDyn, offset, 1, slack, nearCount);
    for (let i = 0; i < nearCount; i++) {
      const c = near[i]!;
      if (marks[c] !== 1) continue;
      this.candidates.push(c);
      // reserve before values(): reserving may move the store
      const at = this.candidateStatic.reserve(1);
      this.candidateDyn.reserve(1);
      this.candidateStatic.values()[at] = zStatic[offset + c]!;
      this.candidateDyn.values()[at] = zDyn[offset + c]!;
    }
  }

  /** The first maximum of the raw fused logits at g among the first `nearCount` classes of `near`. */
  private argmaxAt(zStatic: LogitArray, zDyn: LogitArray, offset: number, g: number, nearCount: number): number {
    const { near } = this;
    let best = near[0]!;
    let max = -Infinity;
    for (let i = 0; i < nearCount; i++) {
      const c = near[i]!;
      const z = (1 - g) * zStatic[offset + c]! + g * zDyn[offset + c]!;
      if (z > max) {
        max = z;
        best = c;
      }
    }
    return best;
  }

  /** Marks every class of `near` whose fused logit at g is within `slack` of the largest. */
  private markNear(
    zStatic: LogitArray,
    zDyn: LogitArray,
    offset: number,
    g: number,
    slack: number,
    nearCount: number,
  ): void {
    const { near } = this;
    let max = -Infinity;
    for (let i = 0; i < nearCount; i++) {
      const c = near[i]!;
      const z = (1 - g) * zStatic[offset + c]! + g * zDyn[offset + c]!;
      if (z > max) max = z;
    }
    for (let i = 0; i < nearCount; i++) {
      const c = near[i]!;
      if ((1 - g) * zStatic[offset + c]! + g * zDyn[offset + c]! >= max - slack) this.marks[c] = 1;
    }
  }
}
