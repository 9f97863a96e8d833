/**
 * The fast ordering and binning paths against their definitions: order statistics against a full
 * comparison sort, the cell table of BinTable against locateBin's binary search, on value sets
 * built to hit the hard cases (ties, subnormals, -0, values exactly on edges and one ulp away,
 * coinciding edges, 0 and 1).
 */
import { describe, expect, it } from 'vitest';
import { BinTable, TABLE_MIN_VALUES, locateBin, type EdgeRule } from '../../src-shared/metrics/bin-location';
import { equalMassEdges, equalWidthEdges } from '../../src-shared/metrics/binning';
import { orderStatistics, sortNonNegative } from '../../src-shared/metrics/order-statistics';
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
