import { BinTable, TABLE_MIN_VALUES, locateBin } from './bin-location';
import { BinStatistics } from './bin-statistics';
import {
  binCountOf,
  checkBinningSpec,
  equalMassEdges,
  equalMassEdgesFromRanked,
  equalMassRanks,
  equalMassUpperRankIndex,
  equalWidthEdges,
  type BinningSpec,
  type EqualWidthSpec,
} from './binning';
import { FIXED_POINT_UPDATES_BETWEEN_CARRIES, LIMB } from './fixed-point-sum';
import { CELL_COUNT, CELL_SHIFT, HIGH_WORD_OFFSET, cellOf, wordsOf } from './float-cells';
import { SMALL_SORT, columnOf, rankCells, selectGathered } from './order-statistics';

/**
 * Batch bin statistics (the sufficient statistics of every binned metric, bin-statistics.ts) of
 * scores against outcomes, for one column or for several columns of a row-major table at once.
 *
 * Columns: column g of [columnFrom, columnTo) holds values[i * columnCount + columnFrom + g]; its
 * outcome in row i is positive when labels[i] === firstLabel + g. The one-vs-rest columns of the
 * classes [from, to) of n x K probabilities are (probabilities, K, from, to, labels, from); a single
 * column of scores with 0/1 outcomes is (scores, 1, 0, 1, outcomes, 1).
 *
 * The columns are read together, row by row: reading one column of a row-major table touches
 * every cache line of every row, so column by column would read the whole table once per column
 * and pass (a row of 10 float64 probabilities spans 80 bytes); that made the classwise metrics
 * half the cost of the suite. Equal-width bins take one pass, equal-mass bins two (below).
 *
 * Sums are BinStatistics' fixed-point ones and counts are integers, so the statistics are exact:
 * the same bits whichever columns are read together, and the same as the streaming accumulators.
 * The hot loops add the fixed-point limbs of FixedPointSums.add written out, and count in Int32:
 * a call per value cost a third of each loop.
 */
export interface ColumnsInput {
  values: Float64Array;
  columnCount: number;
  columnFrom: number;
  columnTo: number;
  labels: Int32Array | Uint8Array;
  firstLabel: number;
}

type EqualMassSpec = Extract<BinningSpec, { scheme: 'equal-mass' }>;

/** Statistics of every column of `input` under `spec`, one per column. */
export function columnStatistics(input: ColumnsInput, spec: BinningSpec): BinStatistics[] {
  return columnStatisticsUnder(input, [spec])[0]!;
}

/**
 * Statistics of every column under each spec (result[s][g]). The first equal-mass spec takes the
 * first equal-width one along in its second pass (the suite's default pair: one read of the table
 * and one fixed-point split per value for both, a fifth less time than apart); any others run alone.
 */
export function columnStatisticsUnder(input: ColumnsInput, specs: readonly BinningSpec[]): BinStatistics[][] {
  const n = (input.values.length / input.columnCount) | 0;
  for (const spec of specs) checkBinningSpec(spec, n);
  const result: Array<BinStatistics[] | undefined> = specs.map(() => undefined);
  const massAt = specs.findIndex((spec) => spec.scheme === 'equal-mass');
  const widthAt = specs.findIndex((spec) => spec.scheme === 'equal-width');
  if (massAt >= 0) {
    const companion = widthAt >= 0 ? (specs[widthAt] as EqualWidthSpec) : null;
    const both = equalMassColumns(input, specs[massAt] as EqualMassSpec, companion);
    result[massAt] = both.mass;
    if (widthAt >= 0) result[widthAt] = both.width!;
  }
  return specs.map(
    (spec, s) =>
      result[s] ??
      (spec.scheme === 'equal-width'
        ? equalWidthColumns(input, widthTableOf(spec, n), binCountOf(spec))
        : equalMassColumns(input, spec, null).mass),
  );
}

/**
 * Equal-width cell tables kept by bin count and edge rule (a table is a function of those alone):
 * a caller that bins again and again, the tuner's ECE at each of a thousand settings, built a
 * 512 KB table every time (4 ms each, 4 s of an hour's tune). Only tables that would be built
 * anyway (TABLE_MIN_VALUES) are kept; a few, the oldest dropped first.
 */
const keptWidthTables = new Map<string, BinTable>();
const KEPT_WIDTH_TABLES = 4;

function widthTableOf(spec: EqualWidthSpec, n: number): BinTable {
  if (n < TABLE_MIN_VALUES) return new BinTable(equalWidthEdges(spec.bins), spec.edgeRule, n);
  const key = `${spec.bins} ${spec.edgeRule}`;
  let table = keptWidthTables.get(key);
  if (table === undefined) {
    table = new BinTable(equalWidthEdges(spec.bins), spec.edgeRule, n);
    if (keptWidthTables.size >= KEPT_WIDTH_TABLES) keptWidthTables.delete(keptWidthTables.keys().next().value!);
    keptWidthTables.set(key, table);
  }
  return table;
}

/** Statistics of (score, outcome) pairs binned under `spec` (the batch path for one column). */
export function binnedStatistics(scores: Float64Array, outcomes: Uint8Array, spec: BinningSpec): BinStatistics {
  const input = { values: scores, columnCount: 1, columnFrom: 0, columnTo: 1, labels: outcomes, firstLabel: 1 };
  return columnStatistics(input, spec)[0]!;
}

/**
 * Classes read in one pass: their histograms (2 MB each, equal mass) stay within a few tens of
 * megabytes whatever K is, and ten classes (the common case) take one pass.
 */
const COLUMNS_PER_PASS = 16;

/**
 * Per class c of [classFrom, classTo), the statistics of the one-vs-rest pairs (p_ic, 1[y_i = c])
 * of row-major n x K probabilities binned under `spec`.
 */
export function classwiseBinnedStatistics(
  probabilities: Float64Array,
  labels: Int32Array,
  classCount: number,
  classFrom: number,
  classTo: number,
  specs: readonly BinningSpec[],
): BinStatistics[][] {
  const perSpec: BinStatistics[][] = specs.map(() => []);
  for (let from = classFrom; from < classTo; from += COLUMNS_PER_PASS) {
    const to = Math.min(classTo, from + COLUMNS_PER_PASS);
    const input = { values: probabilities, columnCount: classCount, columnFrom: from, columnTo: to, labels };
    columnStatisticsUnder({ ...input, firstLabel: from }, specs).forEach((perClass, s) =>
      perSpec[s]!.push(...perClass),
    );
  }
  return perSpec;
}

/** Equal width: one pass, each value located through the table shared by every column. */
function equalWidthColumns(input: ColumnsInput, table: BinTable, binCount: number): BinStatistics[] {
  const { values, columnCount, columnFrom, labels, firstLabel } = input;
  const n = (values.length / columnCount) | 0;
  const width = input.columnTo - columnFrom;
  const sums = new ColumnSums(width, binCount);
  const { counts, positives, high, low } = sums;
  const cellBins = table.cellBins;
  const tableLength = cellBins.length;
  const { edges, rule } = table;
  const words = wordsOf(values);
  const highWord = HIGH_WORD_OFFSET;
  const shift = CELL_SHIFT;
  for (let start = 0; start < n; start += FIXED_POINT_UPDATES_BETWEEN_CARRIES) {
    const end = Math.min(n, start + FIXED_POINT_UPDATES_BETWEEN_CARRIES);
    for (let i = start; i < end; i++) {
      const row = i * columnCount + columnFrom;
      // only the label's column has a positive outcome: its slot is remembered, added once per row
      const positiveColumn = labels[i] - firstLabel;
      let positiveSlot = -1;
      for (let g = 0; g < width; g++) {
        const at = row + g;
        const value = values[at];
        const cell = words[2 * at + highWord] >>> shift; // sign bit kept: negatives miss the table
        let bin = cell < tableLength ? cellBins[cell] : -1;
        if (bin < 0) bin = locateBin(value, edges, rule);
        const slot = g * binCount + bin;
        if (g === positiveColumn) positiveSlot = slot;
        addSample(counts, high, low, slot, value);
      }
      if (positiveSlot >= 0) positives[positiveSlot]++;
    }
    sums.noteUpdates(end - start);
  }
  return sums.statistics();
}

/**
 * Equal mass, in two passes instead of three (histogram, gather, bin): the histogram pass finds
 * the float cells holding each edge's order statistics (rankCells); the second pass gathers the
 * values of those cells and adds every other value at once, because a cell that holds no edge's
 * order statistic lies wholly between two edges (two consecutive order statistics have no value
 * between them), so its bin is the number of edges whose upper order statistic lies in a lower
 * cell. The gathered values, the only ones that can sit on an edge, are located exactly once the
 * edges are selected from them. An equal-width `companion` is binned in the second pass too.
 */
function equalMassColumns(
  input: ColumnsInput,
  spec: EqualMassSpec,
  companion: EqualWidthSpec | null,
): { mass: BinStatistics[]; width: BinStatistics[] | null } {
  const { values, columnCount, columnFrom, labels, firstLabel } = input;
  const n = (values.length / columnCount) | 0;
  const width = input.columnTo - columnFrom;
  const binCount = binCountOf(spec);
  if (n <= SMALL_SORT) {
    const widthStatistics =
      companion === null ? null : equalWidthColumns(input, widthTableOf(companion, n), binCountOf(companion));
    return { mass: fewEqualMassColumns(input, spec), width: widthStatistics };
  }
  // the companion's table and sums (empty when there is none: the loop then skips them)
  const withWidth = companion !== null;
  const widthTable = withWidth ? widthTableOf(companion, n) : null;
  const widthCellBins = widthTable?.cellBins ?? new Int16Array(0);
  const widthCellCount = widthCellBins.length;
  const widthEdges = widthTable?.edges ?? new Float64Array(0);
  const widthRule = widthTable?.rule ?? 'left-closed';
  const widthBinCount = withWidth ? binCountOf(companion) : 0;
  const widthSums = new ColumnSums(width, widthBinCount);
  const { counts: widthCounts, positives: widthPositives, high: widthHigh, low: widthLow } = widthSums;
  const ranks = equalMassRanks(n, spec.bins, spec.massEdges);
  const cells = rankCells(values, columnCount, columnFrom, input.columnTo, ranks);
  const { cellTable, slotOffset } = cells;
  writeCellBins(cells, ranks.length, spec);
  const sums = new ColumnSums(width, binCount);
  const { counts, positives, high, low } = sums;
  const gathered = new Float64Array(slotOffset[slotOffset.length - 1]!);
  const gatheredPositive = new Uint8Array(gathered.length);
  const fill = Int32Array.from(slotOffset.slice(0, -1));
  const words = wordsOf(values);
  const highWord = HIGH_WORD_OFFSET;
  const shift = CELL_SHIFT;
  const cellCount = CELL_COUNT;
  for (let start = 0; start < n; start += FIXED_POINT_UPDATES_BETWEEN_CARRIES) {
    const end = Math.min(n, start + FIXED_POINT_UPDATES_BETWEEN_CARRIES);
    for (let i = start; i < end; i++) {
      const row = i * columnCount + columnFrom;
      const positiveColumn = labels[i] - firstLabel;
      let positiveSlot = -1;
      let widthPositiveSlot = -1;
      for (let g = 0; g < width; g++) {
        const at = row + g;
        const value = values[at];
        const cell = (words[2 * at + highWord] >>> shift) & (cellCount - 1);
        if (withWidth) {
          // as in equalWidthColumns (the sign bit, masked here, only matters to values the
          // histogram pass has already refused)
          let bin = cell < widthCellCount ? widthCellBins[cell] : -1;
          if (bin < 0) bin = locateBin(value, widthEdges, widthRule);
          const slot = g * widthBinCount + bin;
          if (g === positiveColumn) widthPositiveSlot = slot;
          addSample(widthCounts, widthHigh, widthLow, slot, value);
        }
        const entry = cellTable[g * cellCount + cell];
        if (entry < 0) {
          const k = fill[-entry - 1]++;
          gathered[k] = value + 0; // -0 as 0
          gatheredPositive[k] = g === positiveColumn ? 1 : 0;
          continue;
        }
        const slot = g * binCount + entry;
        if (g === positiveColumn) positiveSlot = slot;
        addSample(counts, high, low, slot, value);
      }
      if (positiveSlot >= 0) positives[positiveSlot]++;
      if (widthPositiveSlot >= 0) widthPositives[widthPositiveSlot]++;
    }
    sums.noteUpdates(end - start);
    widthSums.noteUpdates(end - start);
  }
  // The edges, from a copy of the gathered values (the selection reorders what it is given).
  const picked = selectGathered(gathered.slice(), cells, ranks);
  const edges = picked.map((ranked) => equalMassEdgesFromRanked(ranked, n, spec.bins, spec.massEdges));
  for (let slot = 0; slot < cells.slotColumn.length; slot++) {
    const g = cells.slotColumn[slot]!;
    for (let k = slotOffset[slot]!; k < slotOffset[slot + 1]!; k++) {
      sums.add(g * binCount + locateBin(gathered[k], edges[g]!, spec.edgeRule), gathered[k], gatheredPositive[k]);
    }
  }
  return { mass: sums.statistics(), width: withWidth ? widthSums.statistics() : null };
}

/**
 * Equal mass for few rows (a live window): each column's edges from a sort, each value located by
 * search. A 2 MB cell table per column would cost more than the whole computation.
 */
function fewEqualMassColumns(
  input: ColumnsInput,
  spec: Extract<BinningSpec, { scheme: 'equal-mass' }>,
): BinStatistics[] {
  const { values, columnCount, columnFrom, labels, firstLabel } = input;
  const binCount = binCountOf(spec);
  return Array.from({ length: input.columnTo - columnFrom }, (_, g) => {
    const column = columnOf(values, columnCount, columnFrom + g);
    const edges = equalMassEdges(column, spec.bins, spec.massEdges);
    const stats = new BinStatistics(binCount);
    for (let i = 0; i < column.length; i++)
      stats.update(locateBin(column[i], edges, spec.edgeRule), column[i], labels[i] === firstLabel + g ? 1 : 0, 1);
    return stats;
  });
}

/**
 * Writes into the cell table the bin of every cell that is not gathered: the number of inner edges
 * whose upper order statistic lies in a lower cell; values of 1 and above go to the extra bin
 * where the edge rule has one (locateBin's rule for them, as no edge exceeds 1).
 */
function writeCellBins(
  cells: ReturnType<typeof rankCells>,
  rankCount: number,
  spec: Extract<BinningSpec, { scheme: 'equal-mass' }>,
): void {
  const { cellTable, rankSlot, slotColumn, slotCell, width } = cells;
  for (let g = 0; g < width; g++) {
    const upperCells = Array.from(
      { length: spec.bins - 1 },
      (_, j) => slotCell[rankSlot[g * rankCount + equalMassUpperRankIndex(j + 1, spec.massEdges)]!]!,
    ).sort((a, b) => a - b);
    const column = cellTable.subarray(g * CELL_COUNT, (g + 1) * CELL_COUNT);
    // cells after the j-th upper cell (in order) are in bin j + 1; filled by ranges, then the
    // gathered cells marked again
    column.fill(0, 0, (upperCells[0] ?? CELL_COUNT - 1) + 1);
    upperCells.forEach((cell, j) => column.fill(j + 1, cell + 1, upperCells[j + 1] ?? CELL_COUNT));
    if (spec.edgeRule === 'one-in-extra-bin') column.fill(spec.bins, cellOf(1));
  }
  slotCell.forEach((cell, slot) => (cellTable[slotColumn[slot]! * CELL_COUNT + cell] = -(slot + 1)));
}

/**
 * The sums of several columns' bins side by side (column g's bins at g * binCount), with integer
 * counts, turned into one BinStatistics per column at the end.
 */
/** LIMB as a module constant: an imported binding read in a hot loop is re-read (and TDZ-checked) per value. */
const LIMB_SIZE = LIMB;

/**
 * One sample in a hot loop (the caller notes the updates at most every 2^20 samples): an integer
 * count and the fixed-point limbs of FixedPointSums.add, written out on the arrays the caller holds
 * (small enough for V8 to inline).
 */
function addSample(counts: Int32Array, high: Float64Array, low: Float64Array, slot: number, value: number): void {
  counts[slot]++;
  const a = value * LIMB_SIZE;
  const l0 = Math.floor(a);
  high[slot] += l0;
  low[slot] += Math.floor((a - l0) * LIMB_SIZE);
}

class ColumnSums {
  readonly counts: Int32Array;
  readonly positives: Int32Array;
  readonly high: Float64Array;
  readonly low: Float64Array;
  private readonly all: BinStatistics;

  constructor(
    private readonly width: number,
    private readonly binCount: number,
  ) {
    this.counts = new Int32Array(width * binCount);
    this.positives = new Int32Array(width * binCount);
    this.all = new BinStatistics(width * binCount);
    ({ high: this.high, low: this.low } = this.all.scoreLimbs);
  }

  /** After at most 2^20 rows of addSample (one sample per column each). */
  noteUpdates(count: number): void {
    this.all.noteUpdates(count);
  }

  /** One sample outside the hot loops (BinStatistics.update, which carries when due). */
  add(slot: number, value: number, positive: number): void {
    this.all.update(slot, value, positive, 1);
  }

  statistics(): BinStatistics[] {
    const { all } = this;
    // the integer counts of the hot loops join those added one by one
    for (let slot = 0; slot < this.width * this.binCount; slot++) {
      all.counts[slot] += this.counts[slot];
      all.positives[slot] += this.positives[slot];
    }
    return Array.from({ length: this.width }, (_, g) => all.section(g * this.binCount, this.binCount));
  }
}
