/**
 * Issue 32 (fit-and-compare speed): a resample's statistics under fixed equal-width bins, from
 * values binned once, are binnedStatistics of the resampled values, bin for bin, exactly.
 */
import { describe, expect, it } from 'vitest';
import { resample } from '../../src-shared/metrics/bootstrap';
import { binnedStatistics } from '../../src-shared/metrics/column-statistics';
import { expectedCalibrationError } from '../../src-shared/metrics/calibration-error';
import { COUNTED_FROM_VALUES } from '../../src-shared/metrics/draw-counts';
import { fixedBinResampler } from '../../src-shared/metrics/fixed-bin-resamples';
import { seededRandom } from '../../src-shared/random';

describe('fixed-bin resamples', () => {
  it('equal binnedStatistics of the resampled values exactly, edges and 1.0 included', () => {
    const random = seededRandom(7);
    const n = 2000;
    // values on edges (j / 15), at 0 and 1, and anywhere
    const scores = Float64Array.from({ length: n }, (_, i) =>
      i % 7 === 0 ? (i % 16) / 15 : i % 11 === 0 ? 1 : random(),
    );
    const outcomes = Uint8Array.from({ length: n }, () => (random() < 0.6 ? 1 : 0));
    for (const spec of [
      { scheme: 'equal-width', bins: 15, edgeRule: 'left-closed' },
      { scheme: 'equal-width', bins: 7, edgeRule: 'right-closed' },
      { scheme: 'equal-width', bins: 10, edgeRule: 'one-in-extra-bin' },
    ] as const) {
      const resampler = fixedBinResampler(scores, outcomes, spec);
      expect(Array.from(resampler.statistics(null).counts)).toEqual(
        Array.from(binnedStatistics(scores, outcomes, spec).counts),
      );
      for (let r = 0; r < 20; r++) {
        const indices = Uint32Array.from({ length: n }, () => Math.floor(random() * n));
        const fast = resampler.statistics(indices);
        const plain = binnedStatistics(resample(scores, indices), resample(outcomes, indices), spec);
        expect(Array.from(fast.counts)).toEqual(Array.from(plain.counts));
        expect(Array.from(fast.positives)).toEqual(Array.from(plain.positives));
        for (let b = 0; b < plain.binCount; b++) expect(fast.meanScore(b)).toBe(plain.meanScore(b));
        expect(expectedCalibrationError(fast)).toBe(expectedCalibrationError(plain));
      }
    }
  });

  it('counts more than 2^20 draws, most of one value, to the same sums as adding them one by one', () => {
    // 1.5 million draws (a carry after the first 2^20), nearly all of the first value: the
    // counted sums still equal those of the draws added one by one
    // (enough values that the resample is counted, not gathered)
    const scores = Float64Array.from({ length: COUNTED_FROM_VALUES }, (_, i) =>
      i === 0 ? 0.7071067811865476 : i / 65_537,
    );
    const outcomes = Uint8Array.from({ length: COUNTED_FROM_VALUES }, (_, i) => i % 2);
    const draws = 3 * 2 ** 19;
    const indices = Uint32Array.from({ length: draws }, (_, j) => (j % 20 === 1 ? j % COUNTED_FROM_VALUES : 0));
    const spec = { scheme: 'equal-width', bins: 15, edgeRule: 'left-closed' } as const;
    const fast = fixedBinResampler(scores, outcomes, spec).statistics(indices);
    const plain = binnedStatistics(resample(scores, indices), resample(outcomes, indices), spec);
    expect(Array.from(fast.counts)).toEqual(Array.from(plain.counts));
    expect(Array.from(fast.positives)).toEqual(Array.from(plain.positives));
    for (let b = 0; b < plain.binCount; b++) expect(fast.scoreSum(b)).toBe(plain.scoreSum(b));
  });
});
