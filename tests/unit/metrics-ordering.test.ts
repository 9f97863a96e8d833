/**
 * The fast ordering and binning paths against their definitions: order statistics and the
 * multi-rank selection against a full comparison sort, the cell table of BinTable against
 * locateBin's binary search, the batch column statistics (one pass for equal width, two for equal
 * mass, several columns of a row-major table at once) against binning each column by its
 * definition, on value sets built to hit the hard cases (ties, subnormals, -0, values exactly on
 * edges and one ulp away, coinciding edges, 0 and 1).
 */
import { describe, expect, it } from 'vitest';
import { BinTable, TABLE_MIN_VALUES, locateBin, type EdgeRule } from '../../src-shared/metrics/bin-location';
import { binStatisticsOf, type BinStatistics } from '../../src-shared/metrics/bin-statistics';
import { assignBins, equalMassEdges, equalWidthEdges, type BinningSpec } from '../../src-shared/metrics/binning';
import { columnStatistics, columnStatisticsUnder } from '../../src-shared/metrics/column-statistics';
import {
  columnOrderStatistics,
  orderStatistics,
  selectRanks,
  sortNonNegative,
} from '../../src-shared/metrics/order-statistics';
import { seededRandom } from '../../src-shared/random';
import { KnobError } from '../../src-shared/errors';

const RULES: EdgeRule[] = ['left-closed', 'right-closed', 'one-in-extra-bin'];

/** The next double above x >= 0 (and below, for x > 0). */
function neighbours(x: number): number[] {
  const value = new Float64Array([x]);
  const bits = new BigUint64Array(value.buffer);
  const out: number[] = [];
  bits[0] = bits[0]! + 1n;
  out.push(value[0]!);
  if (x > 0) {
    bits[0] = bits[0]! - 2n;
    out.push(value[0]!);
  }
  return out;
}

function valueSets(): Array<[string, Float64Array]> {
  const random = seededRandom(7);
  // Above the size where orderStatistics and sortNonNegative switch from the built-in sort to cells and radix.
  const n = 40_000;
  return [
    ['uniform', Float64Array.from({ length: n }, () => random())],
    ['heavy near 0 (u^12, as classwise probabilities)', Float64Array.from({ length: n }, () => random() ** 12)],
    [
      'ties only: 0, 0.25, 0.5, 1',
      Float64Array.from({ length: n }, () => [0, 0.25, 0.5, 1][Math.floor(random() * 4)]!),
    ],
    ['subnormals, -0 and 1', Float64Array.from({ length: n }, (_, i) => [5e-324, -0, 1, 2.2e-308, random()][i % 5]!)],
    ['one value', Float64Array.of(0.3)],
    // Above the built-in sort's range, so the radix sort and the large-cell path run too.
    [
      '50,000 values, a third of them tied at 0.5',
      Float64Array.from({ length: 50_000 }, (_, i) => (i % 3 === 0 ? 0.5 : random() ** 3)),
    ],
  ];
}

describe('orderStatistics', () => {
  for (const [name, values] of valueSets()) {
    it(`equals a full sort at every requested rank: ${name}`, () => {
      const sorted = Float64Array.from(values, (v) => v + 0).sort();
      const random = seededRandom(3);
      const ranks = [0, values.length - 1, ...Array.from({ length: 40 }, () => Math.floor(random() * values.length))];
      expect(Array.from(orderStatistics(values, ranks))).toEqual(ranks.map((r) => sorted[r]));
      expect(Array.from(sortNonNegative(values))).toEqual(Array.from(sorted));
    });
  }

  it('refuses negative and NaN values and ranks out of range, naming them', () => {
    expect(() => orderStatistics(Float64Array.of(0.1, -0.2), [0])).toThrow(/non-negative values, got -0.2 at 1/);
    expect(() => orderStatistics(Float64Array.of(0.1, Number.NaN), [0])).toThrow(KnobError);
    expect(() => orderStatistics(Float64Array.of(0.1, 0.2), [2])).toThrow(/rank 2 outside 0..1/);
  });
});

describe('BinTable', () => {
  const random = seededRandom(11);
  const edgeSets: Array<[string, Float64Array]> = [
    ...[1, 2, 5, 15, 100].map((b): [string, Float64Array] => [`${b} equal-width`, equalWidthEdges(b)]),
    [
      'equal-mass on heavy-near-0 values',
      equalMassEdges(
        Float64Array.from({ length: 5000 }, () => random() ** 12),
        15,
        'midpoint',
      ),
    ],
    [
      'equal-mass with coinciding edges (ties at 0 and 1)',
      equalMassEdges(
        Float64Array.from({ length: 300 }, (_, i) => (i < 150 ? 0 : i < 200 ? random() : 1)),
        15,
        'quantile',
      ),
    ],
    ['edges at subnormals and one ulp apart', Float64Array.of(0, 5e-324, 1e-320, 0.5, neighbours(0.5)[0]!, 1)],
  ];
  for (const [name, edges] of edgeSets) {
    it(`locates exactly as locateBin under every rule: ${name}`, () => {
      const probes = [
        0,
        -0,
        1,
        5e-324,
        ...Array.from({ length: 5000 }, () => random()),
        ...Array.from({ length: 5000 }, () => random() ** 20),
      ];
      for (const edge of edges) probes.push(edge, ...neighbours(edge).filter((v) => v <= 1));
      const values = Float64Array.from(probes);
      for (const rule of RULES) {
        const expected = Array.from(values, (v) => locateBin(v, edges, rule));
        // With the cell table (built for many values) and without it (few values).
        for (const valueCount of [TABLE_MIN_VALUES, 10]) {
          const table = new BinTable(edges, rule, valueCount);
          const located = new Int32Array(values.length);
          table.locateRangeInto(values, 0, values.length, located);
          expect(Array.from(located)).toEqual(expected);
          const middle = new Int32Array(100);
          table.locateRangeInto(values, 1000, 1100, middle);
          expect(Array.from(middle)).toEqual(expected.slice(1000, 1100));
        }
      }
    });
  }
});

describe('selectRanks', () => {
  const random = seededRandom(5);
  const n = 3000;
  const orders: Array<[string, Float64Array]> = [
    ['random', Float64Array.from({ length: n }, () => random())],
    ['sorted', Float64Array.from({ length: n }, (_, i) => i / n)],
    ['reversed', Float64Array.from({ length: n }, (_, i) => 1 - i / n)],
    ['organ pipe', Float64Array.from({ length: n }, (_, i) => Math.min(i, n - i) / n)],
    ['all equal', new Float64Array(n).fill(0.25)],
    ['two values', Float64Array.from({ length: n }, (_, i) => (i % 2 ? 0.1 : 0.9))],
  ];
  for (const [name, values] of orders) {
    it(`puts every requested rank where a sort would: ${name}`, () => {
      const sorted = values.slice().sort();
      const ranks = [0, 1, 17, n >> 1, (n >> 1) + 1, n - 2, n - 1, 17];
      const selected = values.slice();
      selectRanks(selected, ranks);
      for (const rank of ranks) expect(selected[rank]).toBe(sorted[rank]);
      expect(selected.slice().sort()).toEqual(sorted); // a rearrangement, nothing lost
    });
  }
});

/** A row-major table whose columns are the given value sets (each cut or cycled to n rows). */
function tableOf(columns: Float64Array[], n: number): Float64Array {
  const table = new Float64Array(n * columns.length);
  for (let i = 0; i < n; i++)
    columns.forEach((column, g) => (table[i * columns.length + g] = column[i % column.length]!));
  return table;
}

function columnOf(table: Float64Array, width: number, g: number): Float64Array {
  return Float64Array.from({ length: table.length / width }, (_, i) => table[i * width + g]!);
}

describe('columnOrderStatistics', () => {
  it('equals orderStatistics of each column, the columns read together', () => {
    const sets = valueSets().filter(([, values]) => values.length > 1);
    for (const n of [500, 50_000]) {
      const table = tableOf(
        sets.map(([, values]) => values),
        n,
      );
      const ranks = [0, 7, n >> 1, n - 1];
      const together = columnOrderStatistics(table, sets.length, 1, sets.length, ranks);
      together.forEach((picked, g) =>
        expect(Array.from(picked)).toEqual(Array.from(orderStatistics(columnOf(table, sets.length, g + 1), ranks))),
      );
    }
  });

  it('names a negative value by its index in the table', () => {
    const table = Float64Array.from({ length: 40_000 * 2 }, (_, i) => (i === 60_001 ? -1 : 0.5));
    expect(() => columnOrderStatistics(table, 2, 0, 2, [0])).toThrow(/got -1 at 60001/);
    expect(() => columnOrderStatistics(table.subarray(0, 200), 2, 0, 2, [0])).not.toThrow();
  });
});

describe('columnStatistics', () => {
  const specs: BinningSpec[] = [
    ...RULES.map((edgeRule): BinningSpec => ({ scheme: 'equal-width', bins: 15, edgeRule })),
    { scheme: 'equal-width', bins: 1, edgeRule: 'right-closed' },
    ...RULES.flatMap((edgeRule) =>
      (['midpoint', 'quantile'] as const).map((massEdges): BinningSpec => ({
        scheme: 'equal-mass',
        bins: 15,
        massEdges,
        edgeRule,
      })),
    ),
    { scheme: 'equal-mass', bins: 1, massEdges: 'midpoint', edgeRule: 'left-closed' },
    { scheme: 'equal-mass', bins: 2, massEdges: 'quantile', edgeRule: 'one-in-extra-bin' },
  ];
  const expectSame = (actual: BinStatistics, expected: BinStatistics): void => {
    expect(actual.binCount).toBe(expected.binCount);
    for (let b = 0; b < expected.binCount; b++) {
      expect([actual.counts[b], actual.positives[b], actual.scoreSum(b)]).toEqual([
        expected.counts[b],
        expected.positives[b],
        expected.scoreSum(b),
      ]);
    }
  };
  // Columns in [0, 1] (binned metrics take probabilities), and rows both below and above the
  // size where equal-mass edges come from cells instead of a sort.
  const sets = valueSets().filter(([, values]) => values.length > 1);
  for (const n of [400, 40_000]) {
    it(`bins every column as its own definition does, bit for bit: ${n} rows`, () => {
      const width = sets.length;
      const table = tableOf(
        sets.map(([, values]) => values),
        n,
      );
      const random = seededRandom(n);
      const labels = Int32Array.from({ length: n }, () => Math.floor(random() * (width + 1)) - 1);
      const input = { values: table, columnCount: width, columnFrom: 1, columnTo: width, labels, firstLabel: 1 };
      // every spec at once too: the first equal-mass spec then bins the first equal-width one in its pass
      const allAtOnce = columnStatisticsUnder(input, [...specs].reverse()).reverse();
      for (const [s, spec] of specs.entries()) {
        const together = columnStatistics(input, spec);
        for (let g = 1; g < width; g++) {
          const column = columnOf(table, width, g);
          const outcomes = Uint8Array.from(labels, (label) => (label === g ? 1 : 0));
          const bins = assignBins(column, spec);
          const expected = binStatisticsOf(bins.binOf, bins.binCount, column, outcomes);
          expectSame(together[g - 1]!, expected);
          expectSame(allAtOnce[s]![g - 1]!, expected);
          // one column with 0/1 outcomes, as the top-label metrics call it
          const single = {
            values: column,
            columnCount: 1,
            columnFrom: 0,
            columnTo: 1,
            labels: outcomes,
            firstLabel: 1,
          };
          expectSame(columnStatistics(single, spec)[0]!, expected);
        }
      }
    });
  }
});
