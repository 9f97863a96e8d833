/**
 * Issue 32: the operator's binning (count, equal width or equal mass, norm) picks the chosen
 * calibration error; its value is the binned error computed by hand, and its identity is the one
 * the metric suite gives the same figure under the same bins.
 */
import { describe, expect, it } from 'vitest';
import {
  BinningChoiceSchema,
  binningOfChoice,
  chosenBinningStatistic,
  chosenFigureIdentity,
  type BinningChoice,
} from '../../src-shared/metrics/binning-choice';
import { topLabelBinnedMetrics } from '../../src-shared/metrics/binned-metrics';

// two bins of two: [0.1, 0.3] (mean 0.2, accuracy 1/2, gap 0.3) and [0.6, 0.9] (mean 0.75, accuracy 1, gap 0.25)
const top = {
  confidence: Float64Array.from([0.1, 0.3, 0.6, 0.9]),
  predicted: Int32Array.from([0, 0, 0, 0]),
  correct: Uint8Array.from([0, 1, 1, 1]),
};
const byHand = { L1: 0.5 * 0.3 + 0.5 * 0.25, L2: Math.sqrt(0.5 * 0.09 + 0.5 * 0.0625), max: 0.3 };

describe('the chosen binning', () => {
  for (const scheme of ['equal-width', 'equal-mass'] as const)
    for (const norm of ['L1', 'L2', 'max'] as const)
      it(`${norm} over 2 ${scheme} bins is the binned error by hand, named as the suite names it`, () => {
        const choice: BinningChoice = { scheme, bins: 2, norm };
        const statistic = chosenBinningStatistic(top, choice);
        expect(statistic.evaluate(null)).toBeCloseTo(byHand[norm], 14);
        const suite = topLabelBinnedMetrics(top, binningOfChoice(choice, 4));
        const same = suite.find((m) => m.identity === statistic.identity);
        expect(same?.value).toBeCloseTo(byHand[norm], 14);
        expect(statistic.identity).toContain(`2 ${scheme}`);
      });

  it('resamples re-bin: a resample of the first two frames twice is one bin-pair of gap 0.3 and 0.3', () => {
    const statistic = chosenBinningStatistic(top, { scheme: 'equal-width', bins: 2, norm: 'max' });
    expect(statistic.evaluate(Uint32Array.from([0, 1, 0, 1]))).toBeCloseTo(0.3, 14);
    expect(statistic.interval).toBe('bias-corrected');
  });

  it('caps equal-mass bins at the samples and says the count used', () => {
    const spec = binningOfChoice({ scheme: 'equal-mass', bins: 10, norm: 'L1' }, 4);
    expect(spec.bins).toBe(4);
    expect(chosenFigureIdentity({ scheme: 'equal-mass', bins: 10, norm: 'L1' }, spec).identity).toContain(
      '4 equal-mass',
    );
    expect(binningOfChoice({ scheme: 'equal-width', bins: 10, norm: 'L1' }, 4).bins).toBe(10);
  });

  it('refuses a count that is not a whole number from 1 to 1000, and an unknown norm', () => {
    for (const bins of [0, 1001, 2.5, -3, Number.NaN])
      expect(BinningChoiceSchema.safeParse({ scheme: 'equal-width', bins, norm: 'L1' }).success).toBe(false);
    expect(BinningChoiceSchema.safeParse({ scheme: 'equal-width', bins: 15, norm: 'L3' }).success).toBe(false);
    expect(BinningChoiceSchema.safeParse({ scheme: 'equal-mass', bins: 1000, norm: 'max' }).success).toBe(true);
  });
});
