import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  binnedMetricsFromStatistics,
  classwiseMetrics,
  classwiseMetricsFromStatistics,
  topLabelBinnedMetrics,
} from '../../src-shared/metrics/binned-metrics';
import { assignBins, binningIdentity, type BinningSpec } from '../../src-shared/metrics/binning';
import { binStatisticsOf } from '../../src-shared/metrics/bin-statistics';
import { binnedStatistics } from '../../src-shared/metrics/column-statistics';
import {
  CalibrationAccumulator,
  ForgettingCalibration,
  SlidingWindowCalibration,
} from '../../src-shared/metrics/streaming';
import { scoresFromLogits, topLabelScores, type ClassScores } from '../../src-shared/metrics/scores';
import { auroc } from '../../src-shared/metrics/selective';
import { smoothEce } from '../../src-shared/metrics/smooth-ece';
import type { MetricValue } from '../../src-shared/metrics/metric-value';
import { syntheticClassifier } from '../support/synthetic-classifier';

const K = 5;
const data = syntheticClassifier({ n: 4000, classCount: K, temperature: 1.8, seed: 17 });
const scores = scoresFromLogits(data.logits, K, data.labels);
const EW15: BinningSpec = { scheme: 'equal-width', bins: 15, edgeRule: 'left-closed' };

function accumulate(s: ClassScores, from: number, to: number): CalibrationAccumulator {
  const acc = new CalibrationAccumulator({ classCount: K });
  for (let i = from; i < to; i++) acc.update(s.probabilities, i * K, s.labels[i]!, 1);
  return acc;
}

function subset(s: ClassScores, from: number, to: number): ClassScores {
  return {
    sampleCount: to - from,
    classCount: K,
    probabilities: s.probabilities.slice(from * K, to * K),
    labels: s.labels.slice(from, to),
    logits: null,
    sampleNll: null,
    sampleBrier: null,
  };
}

const values = (metrics: MetricValue[]) => metrics.map((m) => [m.identity, m.value]);

describe('streaming equal-width metrics', () => {
  it('equal the batch metrics exactly after any split-and-merge (property)', () => {
    const batch = [...topLabelBinnedMetrics(topLabelScores(scores), EW15), ...classwiseMetrics(scores, EW15)];
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: 3999 }), { maxLength: 6 }), (cuts) => {
        const bounds = [0, ...cuts.sort((a, b) => a - b), 4000];
        const parts = bounds.slice(1).map((end, i) => accumulate(scores, bounds[i]!, end));
        // merge in a scrambled order
        const merged = parts.reverse().reduce(
          (acc, part) => {
            acc.merge(part);
            return acc;
          },
          new CalibrationAccumulator({ classCount: K }),
        );
        expect(values(merged.exactMetrics())).toEqual(values(batch));
      }),
      { seed: 12, numRuns: 30 },
    );
  });

  it('a sliding window equals the batch metrics over the window, bit for bit', () => {
    const window = new SlidingWindowCalibration(700, { classCount: K });
    for (let i = 0; i < 2500; i++) window.push(scores.probabilities, i * K, scores.labels[i]!);
    const last = subset(scores, 1800, 2500);
    expect(values(window.accumulator.exactMetrics())).toEqual(
      values([...topLabelBinnedMetrics(topLabelScores(last), EW15), ...classwiseMetrics(last, EW15)]),
    );
  });

  it('sketch metrics (equal-mass, SmoothECE, AUROC) are within a cell width of exact, and say so', () => {
    const acc = accumulate(scores, 0, 4000);
    const sketch = acc.sketchMetrics();
    const top = topLabelScores(scores);
    const smooth = sketch.find((m) => m.name === 'SmoothECE')!;
    expect(smooth.approximation).toMatch(/16384-cell/);
    expect(Math.abs(smooth.value - smoothEce(top.confidence, top.correct).value.value)).toBeLessThan(2e-4);
    expect(Math.abs(sketch.find((m) => m.name === 'AUROC')!.value - auroc(top)!.value)).toBeLessThan(1e-3);
    const emExact = topLabelBinnedMetrics(top, {
      scheme: 'equal-mass',
      bins: 15,
      massEdges: 'midpoint',
      edgeRule: 'right-closed',
    }).find((m) => m.name === 'ECE')!.value;
    expect(Math.abs(sketch.find((m) => m.name === 'ECE')!.value - emExact)).toBeLessThan(5e-3);
  });

  it('exponential forgetting follows a change of calibration and names its weighting', () => {
    const forgetting = new ForgettingCalibration(200);
    for (let i = 0; i < 2000; i++) forgetting.push(0.9, i % 10 < 9 ? 1 : 0); // calibrated
    const calm = forgetting.metrics().find((m) => m.name === 'ECE')!;
    for (let i = 0; i < 1000; i++) forgetting.push(0.9, i % 2); // 50 % accurate at 0.9
    const shifted = forgetting.metrics().find((m) => m.name === 'ECE')!;
    expect(calm.value).toBeLessThan(0.01);
    expect(shifted.value).toBeGreaterThan(0.35);
    expect(shifted.identity).toMatch(/half-life 200 samples/);
  });

  it('statistics-based and sample-based identities agree', () => {
    const acc = accumulate(scores, 0, 10);
    expect(binnedMetricsFromStatistics(acc.topLabel, binningIdentity(EW15))[0]!.identity).toBe(
      'ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)',
    );
    expect(classwiseMetricsFromStatistics(acc.classwise, binningIdentity(EW15))[0]!.identity).toMatch(
      /^ECE\(classwise/,
    );
  });
});

describe('kept equal-width bin tables', () => {
  it('bin as a table built afresh does, whichever specs came before and were dropped', () => {
    const n = 40_000; // above TABLE_MIN_VALUES: a table is built, and kept
    const scores = Float64Array.from({ length: n }, (_, i) => ((i * 7919) % n) / n);
    const outcomes = Uint8Array.from({ length: n }, (_, i) => ((i * 31) % 3 === 0 ? 1 : 0));
    const specs: BinningSpec[] = [10, 15, 20, 25, 30, 15, 10].flatMap((bins) => [
      { scheme: 'equal-width', bins, edgeRule: 'left-closed' },
      { scheme: 'equal-width', bins, edgeRule: 'one-in-extra-bin' },
    ]);
    for (const spec of specs) {
      const kept = binnedStatistics(scores, outcomes, spec);
      const bins = assignBins(scores, spec);
      const fresh = binStatisticsOf(bins.binOf, bins.binCount, scores, outcomes);
      expect(Array.from(kept.counts), binningIdentity(spec)).toEqual(Array.from(fresh.counts));
      expect(Array.from(kept.positives)).toEqual(Array.from(fresh.positives));
      for (let b = 0; b < kept.binCount; b++)
        if (kept.counts[b]! > 0) expect(kept.meanScore(b)).toBe(fresh.meanScore(b));
    }
  });
});
