import { describe, expect, it } from 'vitest';
import { bootstrapInterval, resample } from '../../src-shared/metrics/bootstrap';
import {
  brownianMaxAbsCdf,
  brownianRangeCdf,
  cumulativeCalibrationTests,
  erfc,
} from '../../src-shared/metrics/cumulative-tests';
import { gateConditionalCalibration } from '../../src-shared/metrics/gate-conditional';
import { gateBuckets, groupedMetrics } from '../../src-shared/metrics/grouped';
import { mmce } from '../../src-shared/metrics/mmce';
import { confidenceHistogram, reliabilityDiagram, smoothReliabilityCurve } from '../../src-shared/metrics/reliability';
import { topLabelBinnedMetrics } from '../../src-shared/metrics/binned-metrics';
import { accuracy } from '../../src-shared/metrics/proper-scores';
import { seededRandom } from '../../src-shared/random';

/** Binary pairs whose outcomes are drawn from `truth(score)`. */
function pairs(n: number, truth: (s: number) => number, seed: number) {
  const random = seededRandom(seed);
  const scores = new Float64Array(n);
  const outcomes = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    scores[i] = 0.05 + 0.9 * random();
    outcomes[i] = random() < truth(scores[i]!) ? 1 : 0;
  }
  return { scores, outcomes };
}

describe('cumulative-difference tests', () => {
  it('the Brownian-motion CDFs have the analytic means sqrt(pi/2) (KS) and 2 sqrt(2/pi) (Kuiper)', () => {
    const integrate = (f: (x: number) => number) => {
      let sum = 0;
      const h = 1e-3;
      for (let x = h / 2; x < 12; x += h) sum += f(x) * h;
      return sum;
    };
    expect(integrate((x) => 1 - brownianMaxAbsCdf(x))).toBeCloseTo(Math.sqrt(Math.PI / 2), 6);
    expect(integrate((x) => 1 - brownianRangeCdf(x))).toBeCloseTo(2 * Math.sqrt(2 / Math.PI), 6);
  });
  it('the CDFs reach 1 and stay there, however large the statistic (no series of 1e200 terms)', () => {
    for (const x of [40, 1e6, 1e200, Infinity]) {
      expect(brownianMaxAbsCdf(x), `max |B| at ${x}`).toBe(1);
      expect(brownianRangeCdf(2 * x), `range at ${2 * x}`).toBe(1);
    }
    // continuous at the cuts: the series itself gives 1 to double precision just below them
    expect(1 - brownianMaxAbsCdf(39.99)).toBeLessThan(1e-15);
    expect(1 - brownianRangeCdf(79.99)).toBeLessThan(1e-15);
  });
  it('erfc matches known values', () => {
    expect(erfc(0)).toBe(1);
    expect(erfc(1)).toBeCloseTo(0.15729920705028513, 15);
    expect(erfc(3)).toBeCloseTo(2.209049699858544e-5, 18);
    expect(erfc(-1)).toBeCloseTo(1.8427007929497148, 15);
  });
  it('calibrated data gives unremarkable P-values; miscalibrated data tiny ones', () => {
    const calibrated = cumulativeCalibrationTests(
      ...(Object.values(pairs(5000, (s) => s, 3)) as [Float64Array, Uint8Array]),
    )!;
    expect(calibrated.ksPValue.value).toBeGreaterThan(0.01);
    expect(calibrated.kuiperPValue.value).toBeGreaterThan(0.01);
    expect(calibrated.spiegelhalterPValue!.value).toBeGreaterThan(0.01);
    const off = cumulativeCalibrationTests(
      ...(Object.values(pairs(5000, (s) => s * s, 3)) as [Float64Array, Uint8Array]),
    )!;
    expect(off.ksPValue.value).toBeLessThan(1e-6);
    expect(off.kuiperPValue.value).toBeLessThan(1e-6);
    // Spiegelhalter's Z weighs residuals by (1 - 2s): it sees over-confidence, not s -> s^2
    const shifted = cumulativeCalibrationTests(
      ...(Object.values(pairs(5000, (s) => 0.5 + 0.5 * (s - 0.5), 3)) as [Float64Array, Uint8Array]),
    )!;
    expect(shifted.spiegelhalterPValue!.value).toBeLessThan(1e-3);
  });
  it('is null (not NaN) when every score is 0 or 1', () => {
    expect(cumulativeCalibrationTests(Float64Array.of(0, 1, 1), Uint8Array.of(0, 1, 0))).toBeNull();
  });
});

describe('MMCE', () => {
  /** The definition as netcal sums it: every pair, O(n^2). */
  function pairwiseMmce(c: Float64Array, correct: Uint8Array): number {
    let sum = 0;
    for (let i = 0; i < c.length; i++)
      for (let j = 0; j < c.length; j++)
        sum += (correct[i]! - c[i]!) * (correct[j]! - c[j]!) * Math.exp(-2.5 * Math.abs(c[i]! - c[j]!));
    return Math.sqrt(Math.max(0, sum) / c.length ** 2);
  }

  it('equals the pairwise sum within 1e-12, with ties, calibrated or not, in any order', () => {
    for (const [n, map] of [
      [3000, (s: number) => s],
      [2000, (s: number) => s * s],
      [1, (s: number) => s],
    ] as const) {
      const { scores, outcomes } = pairs(n, map, 11);
      // ties: a third of the scores rounded to two decimals
      for (let i = 0; i < n; i += 3) scores[i] = Math.round(scores[i]! * 100) / 100;
      const expected = pairwiseMmce(scores, outcomes);
      const value = mmce(scores, outcomes);
      expect(Math.abs(value.value - expected), `n ${n}`).toBeLessThanOrEqual(1e-12);
      expect(value.identity).toMatch(/exact/);
      const reversed = mmce(scores.slice().reverse(), outcomes.slice().reverse());
      expect(Math.abs(reversed.value - expected)).toBeLessThanOrEqual(1e-12);
    }
  });

  it('is exact at a million samples: the same value summed from the other end', () => {
    const { scores, outcomes } = pairs(1_000_000, (s) => s * s, 5);
    const value = mmce(scores, outcomes);
    expect(value.identity).toMatch(/exact\)$/);
    // the same factorisation run from the most confident down, written out here: a second,
    // independent summation of every pair
    const order = Array.from(scores.keys()).sort((a, b) => scores[b]! - scores[a]!);
    let sum = 0;
    let carried = 0;
    for (let rank = 0; rank < order.length; rank++) {
      const i = order[rank]!;
      const r = outcomes[i]! - scores[i]!;
      if (rank > 0) {
        const previous = order[rank - 1]!;
        carried =
          Math.exp(-2.5 * (scores[previous]! - scores[i]!)) * (carried + outcomes[previous]! - scores[previous]!);
      }
      sum += r * r + 2 * r * carried;
    }
    expect(Math.abs(value.value - Math.sqrt(sum) / order.length)).toBeLessThan(1e-10);
    // s -> s^2 on uniform scores is far from calibrated: a clearly positive value
    expect(value.value).toBeGreaterThan(0.05);
  });
});

describe('reliability data', () => {
  const { scores, outcomes } = pairs(3000, (s) => Math.min(1, s * 0.8 + 0.1), 9);
  it('bins carry n, mean confidence, accuracy, gap and a Wilson interval around the accuracy', () => {
    const diagram = reliabilityDiagram(scores, outcomes, { scheme: 'equal-width', bins: 10, edgeRule: 'left-closed' });
    expect(diagram.bins).toHaveLength(10);
    expect(diagram.bins.reduce((a, b) => a + b.count, 0)).toBe(3000);
    for (const bin of diagram.bins.filter((b) => b.count > 0)) {
      expect(bin.gap).toBeCloseTo(bin.accuracy! - bin.meanConfidence!, 15);
      expect(bin.wilsonLo!).toBeLessThanOrEqual(bin.accuracy!);
      expect(bin.wilsonHi!).toBeGreaterThanOrEqual(bin.accuracy!);
    }
    const fine = reliabilityDiagram(scores, outcomes, { scheme: 'equal-width', bins: 20, edgeRule: 'left-closed' });
    expect(fine.bins[0]!.count).toBe(0); // no scores below 0.05
    expect(fine.bins[0]!.accuracy).toBeNull();
  });
  it("a bin's Wilson interval: 8 of 10 as tabulated, and one at 100 % or 0 % ends exactly at 1 or 0", () => {
    const bin = (n: number, positives: number) =>
      reliabilityDiagram(
        new Float64Array(n).fill(0.55),
        Uint8Array.from({ length: n }, (_, i) => (i < positives ? 1 : 0)),
        { scheme: 'equal-width', bins: 10, edgeRule: 'left-closed' },
      ).bins[5]!;
    const eight = bin(10, 8);
    expect(eight.wilsonLo!).toBeCloseTo(0.4901624, 6);
    expect(eight.wilsonHi!).toBeCloseTo(0.9433178, 6);
    // the formula's centre + half rounds to a hair below 1 for some n: the interval is the app's one
    // (interval-variants.ts), which contains the accuracy it is drawn around
    for (const n of [1, 3, 7, 49, 97, 1000, 12345]) {
      expect(bin(n, n).wilsonHi, `${n} of ${n}`).toBe(1);
      expect(bin(n, 0).wilsonLo, `0 of ${n}`).toBe(0);
    }
  });
  it('histogram counts every sample; smooth curve has a band around it', () => {
    expect(confidenceHistogram(scores, 20).counts.reduce((a, b) => a + b, 0)).toBe(3000);
    const curve = smoothReliabilityCurve(scores, outcomes, { replicates: 40, seed: 3 });
    expect(curve.identity).toMatch(/bootstrap band of 40 resamples, seed 3/);
    const mid = 50;
    // the band contains the curve at every point, not only about it (widened where the resamples leave it out)
    for (let i = 0; i < curve.accuracy.length; i++) {
      expect(curve.bandLo[i]!).toBeLessThanOrEqual(curve.accuracy[i]!);
      expect(curve.bandHi[i]!).toBeGreaterThanOrEqual(curve.accuracy[i]!);
    }
    expect(Math.abs(curve.accuracy[mid]! - (0.5 * 0.8 + 0.1))).toBeLessThan(0.05);
  });
});

describe('bootstrap intervals and grouping', () => {
  it('a seeded bootstrap is reproducible and covers the estimate', () => {
    const { scores, outcomes } = pairs(2000, (s) => s, 2);
    const ece = (idx: Uint32Array) =>
      topLabelBinnedMetrics(
        { confidence: resample(scores, idx), predicted: new Int32Array(idx.length), correct: resample(outcomes, idx) },
        { scheme: 'equal-width', bins: 15, edgeRule: 'left-closed' },
      )[0]!.value;
    const a = bootstrapInterval(2000, ece, { seed: 4, replicates: 100 });
    expect(bootstrapInterval(2000, ece, { seed: 4, replicates: 100 })).toEqual(a);
    const all = ece(Uint32Array.from({ length: 2000 }, (_, i) => i));
    expect(a.lo).toBeLessThanOrEqual(all + 0.01);
    expect(a.hi).toBeGreaterThan(a.lo);
    expect(a.identity).toBe('95 % percentile bootstrap, 100 resamples, seed 4');
  });
  it('grouped metrics report each key with its count', () => {
    const { scores, outcomes } = pairs(300, (s) => s, 6);
    const keys = Int32Array.from({ length: 300 }, (_, i) => i % 3);
    const groups = groupedMetrics(
      keys,
      (c) => `severity ${c + 1}`,
      (idx) => [
        accuracy({
          confidence: resample(scores, idx),
          predicted: new Int32Array(idx.length),
          correct: resample(outcomes, idx),
        }),
      ],
    );
    expect(groups.map((g) => [g.key, g.count])).toEqual([
      ['severity 1', 100],
      ['severity 2', 100],
      ['severity 3', 100],
    ]);
    expect(gateBuckets(Float64Array.of(0, 0.34, 0.99, 1.2, -0.1))).toEqual(Int32Array.of(0, 1, 2, 2, 0));
  });
});

describe('gate-conditional calibration diagnostic', () => {
  it('finds nothing when the gate is unrelated to correctness given confidence', () => {
    const { scores, outcomes } = pairs(3000, (s) => s, 11);
    const random = seededRandom(12);
    const gate = Float64Array.from({ length: 3000 }, () => random());
    const result = gateConditionalCalibration(scores, outcomes, gate, { permutations: 199, seed: 1 });
    expect(result.pValue).toBeGreaterThan(0.05);
  });
  it('detects a gate that carries calibration evidence beyond confidence', () => {
    const random = seededRandom(13);
    const n = 3000;
    const scores = new Float64Array(n);
    const outcomes = new Uint8Array(n);
    const gate = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      scores[i] = 0.3 + 0.6 * random();
      gate[i] = random();
      // high gate: over-confident; low gate: under-confident
      const p = Math.min(1, Math.max(0, scores[i]! + (0.5 - gate[i]!) * 0.4));
      outcomes[i] = random() < p ? 1 : 0;
    }
    const result = gateConditionalCalibration(scores, outcomes, gate, { permutations: 199, seed: 1 });
    expect(result.pValue).toBeLessThan(0.01);
    expect(result.effectSize).toBeGreaterThan(3);
    expect(result.identity).toMatch(/199 permutations, seed 1/);
  });
});
