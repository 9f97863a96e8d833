/**
 * Issue 29: one replicate's draw counts serve every fixed-bin statistic evaluated on it, and a new
 * replicate is counted afresh (a stale count would give every statistic the first resample's value).
 */
import { describe, expect, it } from 'vitest';
import { eachResample, resample } from '../../src-shared/metrics/bootstrap';
import { binnedStatistics } from '../../src-shared/metrics/column-statistics';
import { COUNTED_FROM_VALUES, drawCounts } from '../../src-shared/metrics/draw-counts';
import { fixedBinResampler } from '../../src-shared/metrics/fixed-bin-resamples';
import { meanStatistic } from '../../src-shared/metrics/headline-intervals';
import { seededRandom } from '../../src-shared/random';

const SPEC = { scheme: 'equal-width', bins: 15, edgeRule: 'left-closed' } as const;

describe('draw counts', () => {
  it('count each index, afresh for indices eachResample did not hand out', () => {
    const indices = Uint32Array.from([3, 0, 3, 3, 1]);
    expect(Array.from(drawCounts(indices, 5))).toEqual([1, 1, 0, 3, 0]);
    indices[0] = 4;
    expect(Array.from(drawCounts(indices, 5))).toEqual([1, 1, 0, 2, 1]);
  });

  it('refuse an index past the values, and a mean never reads a value left out', () => {
    expect(() => drawCounts(Uint32Array.from([0, 3]), 3)).toThrow(/draw 1 is value 3 of 3/);
    // an infinite NLL (a true class given probability 0) left out of the resample stays out of its mean
    // (gathered below COUNTED_FROM_VALUES values, counted from it)
    for (const n of [3, COUNTED_FROM_VALUES]) {
      const values = Float64Array.from({ length: n }, (_, i) => (i === 0 ? Infinity : i === 2 ? 2 : 1));
      const nll = meanStatistic('NLL', 'NLL(test)', values, true);
      const withoutFirst = Uint32Array.from({ length: n }, (_, j) => 1 + (j % 2));
      const expected = withoutFirst.reduce((sum, i) => sum + values[i]!, 0) / n;
      expect(nll.evaluate(withoutFirst)).toBeCloseTo(expected, 12);
      withoutFirst[0] = 0;
      expect(nll.evaluate(withoutFirst)).toBe(Infinity);
    }
  });

  it('are shared within a replicate and new at the next: two resamplers equal a plain binning at each', () => {
    const random = seededRandom(11);
    // enough values that a resample is counted, not gathered
    const n = COUNTED_FROM_VALUES;
    const scoresA = Float64Array.from({ length: n }, () => random());
    const scoresB = Float64Array.from({ length: n }, () => random());
    const outcomes = Uint8Array.from({ length: n }, () => (random() < 0.5 ? 1 : 0));
    const a = fixedBinResampler(scoresA, outcomes, SPEC);
    const b = fixedBinResampler(scoresB, outcomes, SPEC);
    const seen = new Set<number>();
    eachResample(n, { replicates: 3, seed: 2 }, (indices) => {
      const counts = drawCounts(indices, n);
      // the same array for every statistic of this replicate
      expect(drawCounts(indices, n)).toBe(counts);
      for (const [resampler, scores] of [
        [a, scoresA],
        [b, scoresB],
      ] as const) {
        const plain = binnedStatistics(resample(scores, indices), resample(outcomes, indices), SPEC);
        const fast = resampler.statistics(indices);
        expect(Array.from(fast.counts)).toEqual(Array.from(plain.counts));
        for (let bin = 0; bin < SPEC.bins; bin++) expect(fast.scoreSum(bin)).toBe(plain.scoreSum(bin));
      }
      seen.add(a.statistics(indices).counts[0]!);
    });
    // the replicates differ, so a stale count would have shown above
    expect(seen.size).toBeGreaterThan(1);
  });
});
