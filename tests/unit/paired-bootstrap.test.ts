/**
 * A/B differences with paired bootstrap intervals (src-shared/metrics/headline-intervals.ts),
 * checked against an independent computation: the same seeded resamples, a plain ECE written
 * here from its definition (15 equal-width bins, [lo,hi) with the last closed), and numpy's linear
 * percentile. On synthetic scores with a known difference (B sharpened 1.6x from calibrated logits:
 * over-confident, so its ECE is worse) the verdict is "worse"; inside the noise it is
 * "indistinguishable"; reversed, "better".
 */
import { describe, expect, it } from 'vitest';
import {
  ECE_15_IDENTITY,
  headlineStatistics,
  meanOverGroups,
  meanValuesOverGroups,
  stratifiedFigure,
  type HeadlineStatistic,
} from '../../src-shared/metrics/headline-intervals';
import {
  independentDifferences,
  pairedDifferenceParts,
  pairedDifferences,
  pairedDifferencesFromParts,
  pairedDifferencesOverGroups,
  partsOverRanges,
} from '../../src-shared/metrics/paired-differences';
import { scoresFromLogits, topLabelScores } from '../../src-shared/metrics/scores';
import { seededRandom } from '../../src-shared/random';
import { syntheticClassifier } from '../support/synthetic-classifier';

function scaled(logits: Float64Array, factor: number): Float64Array {
  return logits.map((z) => z * factor);
}

function statistics(logits: Float64Array, labels: Int32Array) {
  const scores = scoresFromLogits(logits, 10, labels);
  return headlineStatistics(scores, topLabelScores(scores));
}

/** ECE from its definition: 15 equal-width bins, |accuracy - mean confidence| weighted by count. */
function plainEce(confidence: number[], correct: number[]): number {
  const count = new Array(15).fill(0);
  const conf = new Array(15).fill(0);
  const acc = new Array(15).fill(0);
  confidence.forEach((c, i) => {
    const bin = Math.min(14, Math.floor(c * 15));
    count[bin]++;
    conf[bin] += c;
    acc[bin] += correct[i];
  });
  let ece = 0;
  for (let b = 0; b < 15; b++)
    if (count[b] > 0) ece += Math.abs(acc[b] / count[b] - conf[b] / count[b]) * (count[b] / confidence.length);
  return ece;
}

function linearPercentile(sorted: number[], q: number): number {
  const rank = q * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (rank - lo) * (sorted[hi] - sorted[lo]);
}

describe('paired bootstrap of A/B differences', () => {
  const { logits, labels } = syntheticClassifier({ n: 3000, classCount: 10, temperature: 1, scale: 1.2, seed: 11 });
  const a = statistics(logits, labels);
  const b = statistics(scaled(logits, 1.6), labels);

  it('the ECE difference and its interval equal an independent computation on the same resamples', () => {
    const replicates = 400;
    const seed = 3;
    const result = pairedDifferences(a, b, labels.length, { replicates, seed }).find(
      (d) => d.identity === ECE_15_IDENTITY,
    )!;
    // Independently: top-label confidence and correctness of each, the same resamples, plain ECE.
    const top = (z: Float64Array) => {
      const scores = scoresFromLogits(z, 10, labels);
      const t = topLabelScores(scores);
      return { confidence: Array.from(t.confidence), correct: Array.from(t.correct) };
    };
    const ta = top(logits);
    const tb = top(scaled(logits, 1.6));
    const random = seededRandom(seed);
    const n = labels.length;
    const differences: number[] = [];
    for (let r = 0; r < replicates; r++) {
      const idx = Array.from({ length: n }, () => Math.floor(random() * n));
      const pick = (values: number[]) => idx.map((i) => values[i]);
      differences.push(
        plainEce(pick(tb.confidence), pick(tb.correct)) - plainEce(pick(ta.confidence), pick(ta.correct)),
      );
    }
    differences.sort((x, y) => x - y);
    expect(result.a).toBeCloseTo(plainEce(ta.confidence, ta.correct), 12);
    expect(result.b).toBeCloseTo(plainEce(tb.confidence, tb.correct), 12);
    expect(result.interval.lo).toBeCloseTo(linearPercentile(differences, 0.025), 12);
    expect(result.interval.hi).toBeCloseTo(linearPercentile(differences, 0.975), 12);
    expect(result.interval.identity).toBe('95 % paired percentile bootstrap, 400 resamples, seed 3');
    // The known difference: sharpened logits are over-confident, their ECE clearly worse.
    expect(result.difference).toBeGreaterThan(0.05);
    expect(result.verdict).toBe('worse');
  });

  it('the verdict flips: reversed it is "better", inside the noise "indistinguishable"', () => {
    const reversed = pairedDifferences(b, a, labels.length, { seed: 1 }).find((d) => d.identity === ECE_15_IDENTITY)!;
    expect(reversed.verdict).toBe('better');
    // A 1 % sharpening on 300 frames is well inside the resampling noise of ECE.
    const small = syntheticClassifier({ n: 300, classCount: 10, temperature: 1, scale: 1.2, seed: 12 });
    const near = pairedDifferences(
      statistics(small.logits, small.labels),
      statistics(scaled(small.logits, 1.01), small.labels),
      300,
      { seed: 1 },
    );
    for (const difference of near) {
      expect(difference.interval.lo, difference.name).toBeLessThanOrEqual(0);
      expect(difference.interval.hi, difference.name).toBeGreaterThanOrEqual(0);
      expect(difference.verdict, difference.name).toBe('indistinguishable');
    }
  });

  it('a difference of float64 rounding alone is indistinguishable, though every resample shows it', () => {
    // the same figures but for the last bits (two gate settings over branches that agree): each
    // resample's difference is ~1e-16 on one side of 0, an interval that excludes 0 and means nothing
    const nudged = a.map((s) => ({
      ...s,
      evaluate: (indices: Uint32Array | null) => s.evaluate(indices) * (1 + 4e-16) + 1e-17,
    }));
    for (const difference of pairedDifferences(a, nudged, labels.length, { seed: 1 })) {
      expect(difference.interval.lo, difference.name).toBeGreaterThan(0);
      expect(difference.verdict, difference.name).toBe('indistinguishable');
    }
    // one part in 1e9 is not rounding: the verdict stands
    const shifted = a.map((s) => ({ ...s, evaluate: (indices: Uint32Array | null) => s.evaluate(indices) + 1e-9 }));
    for (const difference of pairedDifferences(a, shifted, labels.length, { seed: 1 }))
      expect(difference.verdict, difference.name).toBe(difference.lowerIsBetter ? 'worse' : 'better');
  });

  it('accuracy is higher-is-better: a change that never alters the top class is indistinguishable by it', () => {
    const accuracy = pairedDifferences(a, b, labels.length, { seed: 1 }).find((d) => d.name === 'accuracy')!;
    // Scaling logits keeps every argmax: the same accuracy on every resample.
    expect(accuracy.difference).toBe(0);
    expect(accuracy.interval.lo).toBe(0);
    expect(accuracy.interval.hi).toBe(0);
    expect(accuracy.verdict).toBe('indistinguishable');
  });
});

describe('stratified bootstrap over groups (conditions of a table)', () => {
  const groups = [0, 1, 2].map((g) =>
    syntheticClassifier({ n: 200 + 100 * g, classCount: 10, temperature: 1, scale: 0.8 + 0.4 * g, seed: 30 + g }),
  );
  const statisticsA = groups.map((g) => statistics(g.logits, g.labels));
  const statisticsB = groups.map((g) => statistics(scaled(g.logits, 1.5), g.labels));
  const counts = groups.map((g) => g.labels.length);

  it('the mean over groups, with each group resampled within itself from seed + group index', () => {
    const replicates = 300;
    const seed = 5;
    // the stratified percentile machinery, on accuracy as a plain mean (its own interval is Wilson's)
    const asMeans = statisticsA.map((list) => list.map((s) => ({ ...s, interval: undefined })));
    const accuracy = meanOverGroups(asMeans, counts, { replicates, seed }).find((f) => f.name === 'accuracy')!;
    const correct = groups.map((g) => {
      const t = topLabelScores(scoresFromLogits(g.logits, 10, g.labels));
      return Array.from(t.correct);
    });
    const meanOf = (values: number[]) => values.reduce((x, y) => x + y, 0) / values.length;
    expect(accuracy.value).toBeCloseTo(meanOf(correct.map(meanOf)), 12);
    // Independently: per group its own seeded stream, the mean over groups per replicate.
    const draws = new Array<number>(replicates).fill(0);
    correct.forEach((values, g) => {
      const random = seededRandom(seed + g);
      const n = values.length;
      for (let r = 0; r < replicates; r++) {
        let sum = 0;
        for (let i = 0; i < n; i++) sum += values[Math.floor(random() * n)];
        draws[r] += sum / n / groups.length;
      }
    });
    draws.sort((x, y) => x - y);
    expect(accuracy.lo).toBeCloseTo(linearPercentile(draws, 0.025), 12);
    expect(accuracy.hi).toBeCloseTo(linearPercentile(draws, 0.975), 12);
    expect(accuracy.method).toBe('95 % stratified (3 groups) percentile bootstrap, 300 resamples, seed 5');
  });

  it('a mean over groups without intervals is, to the bit, the one its intervals are built around and contain', () => {
    // knob table shows these means with or without --intervals: (sum of x) / G and the sum of x / G
    // can differ in the last bit, which put an estimate one ulp outside its own interval
    const means = meanValuesOverGroups(statisticsA);
    const figures = meanOverGroups(statisticsA, counts, { replicates: 200, seed: 0 });
    expect(figures.map((f) => f.value)).toEqual(means);
    for (const figure of figures) {
      expect(figure.lo, figure.name).toBeLessThanOrEqual(figure.value);
      expect(figure.hi, figure.name).toBeGreaterThanOrEqual(figure.value);
    }
  });

  it('an interval never leaves out the estimate it is shown with: paired, independent and stratified', () => {
    // a statistic biased on resamples (as ECE is, upward): every draw 0.1 where the estimate is 0.5
    const biased = (name: string, estimate: number, drawn: number): HeadlineStatistic => ({
      name,
      identity: `${name}(test)`,
      lowerIsBetter: false,
      evaluate: (indices) => (indices === null ? estimate : drawn),
    });
    const paired = pairedDifferences([biased('x', 0, 0)], [biased('x', 0.5, 0.1)], 50, { replicates: 100 })[0]!;
    expect(paired.difference).toBe(0.5);
    expect([paired.interval.lo, paired.interval.hi]).toEqual([0.1, 0.5]);
    expect(paired.interval.identity).toBe('95 % paired percentile bootstrap, 100 resamples, seed 0');
    expect(paired.note).toMatch(/excluded the estimate .*; widened to contain it$/);
    expect(paired.verdict).toBe('better');
    const independent = independentDifferences([biased('x', 0, 0)], [biased('x', 0.5, 0.1)], { a: 40, b: 60 })[0]!;
    expect([independent.interval.lo, independent.interval.hi]).toEqual([0.1, 0.5]);
    expect(independent.note).toMatch(/widened to contain it$/);
    // an unwidened difference carries no note
    expect(pairedDifferences([biased('x', 0, 0)], [biased('x', 0.1, 0.1)], 50)[0]!.note).toBeUndefined();
    const figure = stratifiedFigure([{ sampleCount: 30, weight: 1, evaluate: (_, indices) => (indices ? 0.1 : 0.5) }]);
    expect([figure.lo, figure.value, figure.hi]).toEqual([0.1, 0.5, 0.5]);
    expect(figure.method).toMatch(/widened to contain it$/);
  });

  it('paired over groups: the mean difference of B - A with a verdict; one group is the plain paired bootstrap', () => {
    const over = pairedDifferencesOverGroups(statisticsA, statisticsB, counts, { seed: 2 });
    const ece = over.find((d) => d.identity === ECE_15_IDENTITY)!;
    const perGroup = statisticsA.map((a, g) => statisticsB[g][3].evaluate(null) - a[3].evaluate(null));
    expect(ece.difference).toBeCloseTo(perGroup.reduce((x, y) => x + y, 0) / 3, 12);
    expect(ece.verdict).toBe('worse');
    const one = pairedDifferencesOverGroups([statisticsA[0]], [statisticsB[0]], [counts[0]], { seed: 2 });
    expect(one).toEqual(pairedDifferences(statisticsA[0], statisticsB[0], counts[0], { seed: 2 }));
  });
});

describe('a paired bootstrap shared by threads (the tuner pool)', () => {
  it("each range of replicates draws the whole run's resamples: ranges put together give its differences exactly", () => {
    const { logits, labels } = syntheticClassifier({ n: 1200, classCount: 10, temperature: 1, scale: 1.2, seed: 3 });
    const a = statistics(logits, labels);
    const b = statistics(scaled(logits, 1.3), labels);
    const options = { replicates: 101, seed: 17 };
    const whole = pairedDifferences(a, b, 1200, options);
    const ranges = [
      { from: 0, to: 34 },
      { from: 34, to: 101 },
    ];
    const parts = ranges.map((replicateRange) =>
      pairedDifferenceParts([a], [b], [1200], { ...options, replicateRange }),
    );
    // outside its range a part's draws are 0: it made none there
    expect(parts[0]!.draws[0]!.subarray(34).every((d) => d === 0)).toBe(true);
    expect(pairedDifferencesFromParts(a, partsOverRanges(parts, ranges, 101), 1, options)).toEqual(whole);
    // the values are every part's: the second's would do as well
    expect(parts[1]!.difference).toEqual(parts[0]!.difference);
  });
});

describe('independent differences (two recordings)', () => {
  it('resample each recording on its own: A from the seed, B from seed + 1', () => {
    const ga = syntheticClassifier({ n: 400, classCount: 10, temperature: 1, scale: 1.2, seed: 41 });
    const gb = syntheticClassifier({ n: 250, classCount: 10, temperature: 1, scale: 0.6, seed: 42 });
    const replicates = 300;
    const seed = 9;
    const accuracy = independentDifferences(
      statistics(ga.logits, ga.labels),
      statistics(gb.logits, gb.labels),
      { a: 400, b: 250 },
      { replicates, seed },
    ).find((d) => d.name === 'accuracy')!;
    const correct = (g: typeof ga) => Array.from(topLabelScores(scoresFromLogits(g.logits, 10, g.labels)).correct);
    const draws = (values: number[], streamSeed: number): number[] => {
      const random = seededRandom(streamSeed);
      return Array.from({ length: replicates }, () => {
        let sum = 0;
        for (let i = 0; i < values.length; i++) sum += values[Math.floor(random() * values.length)];
        return sum / values.length;
      });
    };
    const a = draws(correct(ga), seed);
    const b = draws(correct(gb), seed + 1);
    const differences = b.map((v, r) => v - a[r]).sort((x, y) => x - y);
    expect(accuracy.interval.lo).toBeCloseTo(linearPercentile(differences, 0.025), 12);
    expect(accuracy.interval.hi).toBeCloseTo(linearPercentile(differences, 0.975), 12);
    expect(accuracy.interval.identity).toMatch(/^95 % independent \(two recordings\) percentile bootstrap/);
  });
});
