import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  TrackingCalibeating,
  applyAffineLogitScaling,
  applyBeta,
  applyHistogramBinning,
  applyIsotonic,
  applyPlatt,
  applyScalingBinning,
  applyTemperature,
  empiricalCoverage,
  fitAffineLogitScaling,
  fitBeta,
  fitConformal,
  fitHistogramBinning,
  fitIsotonic,
  fitPlatt,
  isotonicAt,
  isotonicAtAscending,
  poolAdjacentViolators,
  fitScalingBinning,
  fitTemperature,
  predictionSets,
  sigmoid,
} from '../../src-shared/calibrators';
import { expectedCalibrationError } from '../../src-shared/metrics/calibration-error';
import { assignBins } from '../../src-shared/metrics/binning';
import { binStatisticsOf } from '../../src-shared/metrics/bin-statistics';
import { negativeLogLikelihood } from '../../src-shared/metrics/proper-scores';
import { scoresFromLogits, topLabelScores } from '../../src-shared/metrics/scores';
import { seededRandom } from '../../src-shared/random';
import { syntheticClassifier } from '../support/synthetic-classifier';

const ece15 = (scores: Float64Array, outcomes: Uint8Array): number => {
  const bins = assignBins(scores, { scheme: 'equal-width', bins: 15, edgeRule: 'left-closed' });
  return expectedCalibrationError(binStatisticsOf(bins.binOf, bins.binCount, scores, outcomes));
};

describe('temperature scaling', () => {
  it('recovers the temperature the labels were drawn with', () => {
    for (const temperature of [0.5, 1, 2.5]) {
      const data = syntheticClassifier({ n: 20_000, classCount: 5, temperature, seed: 3 });
      const fit = fitTemperature(data.logits, data.labels, 5);
      expect(fit.report.converged).toBe(true);
      expect(Math.abs(fit.params.temperature / temperature - 1)).toBeLessThan(0.05);
    }
  });
  it('solves the 1-D convex problem to 1e-10: the NLL derivative vanishes at the optimum', () => {
    const data = syntheticClassifier({ n: 3000, classCount: 4, temperature: 1.7, seed: 9 });
    const { params, report } = fitTemperature(data.logits, data.labels, 4);
    const nllAt = (t: number) =>
      negativeLogLikelihood(scoresFromLogits(applyTemperature({ temperature: t }, data.logits), 4, data.labels)).value;
    const h = 1e-4 * params.temperature;
    expect(nllAt(params.temperature)).toBeLessThanOrEqual(nllAt(params.temperature + h) + 1e-13);
    expect(nllAt(params.temperature)).toBeLessThanOrEqual(nllAt(params.temperature - h) + 1e-13);
    expect(report.objective).toBeCloseTo(nllAt(params.temperature), 12);
  });
  it('is deterministic', () => {
    const data = syntheticClassifier({ n: 2000, classCount: 3, temperature: 2, seed: 1 });
    expect(fitTemperature(data.logits, data.labels, 3)).toEqual(fitTemperature(data.logits, data.labels, 3));
  });
});

describe('vector and matrix scaling', () => {
  it('lower the NLL below temperature scaling on data with class-dependent miscalibration', () => {
    const k = 4;
    const data = syntheticClassifier({ n: 8000, classCount: k, temperature: 1, seed: 5 });
    // distort: scale and shift each class differently
    const distorted = data.logits.map((z, i) => z * (1 + 0.5 * (i % k)) + (i % k === 0 ? 1 : 0));
    const nll = (logits: Float64Array) => negativeLogLikelihood(scoresFromLogits(logits, k, data.labels)).value;
    const ts = nll(applyTemperature(fitTemperature(distorted, data.labels, k).params, distorted));
    const vector = fitAffineLogitScaling('vector', distorted, data.labels, k);
    const matrix = fitAffineLogitScaling('matrix', distorted, data.labels, k);
    expect(vector.report.converged).toBe(true);
    expect(nll(applyAffineLogitScaling(vector.params, distorted))).toBeLessThan(ts - 0.01);
    expect(nll(applyAffineLogitScaling(matrix.params, distorted))).toBeLessThanOrEqual(
      nll(applyAffineLogitScaling(vector.params, distorted)) + 1e-3,
    );
  });
});

describe('binary and top-label calibrators', () => {
  const data = syntheticClassifier({ n: 10_000, classCount: 5, temperature: 2.2, seed: 8 });
  const top = topLabelScores(scoresFromLogits(data.logits, 5, data.labels));
  const half = 5000;
  const fitC = top.confidence.subarray(0, half);
  const fitY = top.correct.subarray(0, half);
  const testC = top.confidence.subarray(half);
  const testY = top.correct.subarray(half);
  const before = ece15(testC, testY);

  it('each reduces the held-out top-label ECE of an over-confident model', () => {
    const outputs: Record<string, Float64Array> = {
      platt: applyPlatt(fitPlatt(fitC, fitY).params, testC),
      beta: applyBeta(fitBeta(fitC, fitY).params, testC),
      isotonic: applyIsotonic(fitIsotonic(fitC, fitY).params, testC),
      histogram: applyHistogramBinning(fitHistogramBinning(fitC, fitY).params, testC),
      scalingBinning: applyScalingBinning(fitScalingBinning(fitC, fitY).params, testC),
    };
    for (const [name, calibrated] of Object.entries(outputs)) {
      expect(ece15(calibrated, testY), name).toBeLessThan(before / 2);
    }
  });

  it('isotonic output is monotone in the score (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 1 })), {
          minLength: 1,
          maxLength: 300,
        }),
        (pairs) => {
          const { params } = fitIsotonic(
            Float64Array.from(pairs, (p) => p[0]),
            pairs.map((p) => p[1]),
          );
          for (let i = 1; i < params.y.length; i++) expect(params.y[i]).toBeGreaterThanOrEqual(params.y[i - 1]!);
          const grid = Float64Array.from({ length: 101 }, (_, i) => i / 100);
          const out = applyIsotonic(params, grid);
          for (let i = 1; i < out.length; i++) expect(out[i]).toBeGreaterThanOrEqual(out[i - 1]! - 1e-15);
        },
      ),
      { seed: 4, numRuns: 200 },
    );
  });

  it('isotonic: pool-adjacent-violators on presorted points and the walk along the map equal the fit and the search, bit for bit', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 1 })), {
          minLength: 1,
          maxLength: 300,
        }),
        fc.array(fc.double({ min: -0.1, max: 1.1, noNaN: true }), { maxLength: 200 }),
        (pairs, probes) => {
          // scores on a grid of 41 values: many ties, which pool first
          const scores = Float64Array.from(pairs, (p) => p[0] / 40);
          const outcomes = pairs.map((p) => p[1]);
          const { params } = fitIsotonic(scores, outcomes);
          const order = Array.from(scores.keys()).sort((a, b) => scores[a]! - scores[b]! || a - b);
          const presorted = poolAdjacentViolators(
            Float64Array.from(order, (i) => scores[i]!),
            order.map((i) => outcomes[i]!),
            null,
          ).params;
          expect(presorted).toEqual(params);
          const ascending = Float64Array.from([...probes, ...scores]).sort();
          const walked = new Float64Array(ascending.length);
          isotonicAtAscending(params, ascending, walked);
          ascending.forEach((s, j) => expect(walked[j]).toBe(isotonicAt(params, s)));
        },
      ),
      { seed: 5, numRuns: 200 },
    );
  });

  it('scaling-binning outputs at most B distinct values; beta reports a, b >= 0', () => {
    const out = applyScalingBinning(fitScalingBinning(fitC, fitY, { bins: 10 }).params, testC);
    expect(new Set(out).size).toBeLessThanOrEqual(10);
    const beta = fitBeta(fitC, fitY);
    expect(beta.params.a).toBeGreaterThanOrEqual(0);
    expect(beta.params.b).toBeGreaterThanOrEqual(0);
    expect(beta.report.converged).toBe(true);
  });
});

describe('online Platt scaling with calibeating', () => {
  it('on a drifting stream, OPS has a lower ECE than a Platt fit frozen on the start', () => {
    const random = seededRandom(21);
    const n = 20_000;
    const scores = new Float64Array(n);
    const outcomes = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      // the true map drifts from calibrated to strongly over-confident and shifted
      const drift = i / n;
      const s = random();
      const x = Math.log(s / (1 - s));
      const p = sigmoid((1 - 0.7 * drift) * x - 1.5 * drift);
      scores[i] = s;
      outcomes[i] = random() < p ? 1 : 0;
    }
    const warmup = 2000;
    const fixed = fitPlatt(scores.subarray(0, warmup), outcomes.subarray(0, warmup)).params;
    const tracker = new TrackingCalibeating();
    const opsForecasts = new Float64Array(n - warmup);
    const calibeated = new Float64Array(n - warmup);
    for (let i = 0; i < n; i++) {
      if (i >= warmup) {
        const forecast = tracker.predict(scores[i]!);
        opsForecasts[i - warmup] = forecast.ops;
        calibeated[i - warmup] = forecast.calibeated;
      }
      tracker.update(scores[i]!, outcomes[i]!);
    }
    const rest = outcomes.subarray(warmup);
    const fixedEce = ece15(applyPlatt(fixed, scores.subarray(warmup)), rest);
    const opsEce = ece15(opsForecasts, rest);
    expect(opsEce).toBeLessThan(0.5 * fixedEce);
    expect(ece15(calibeated, rest)).toBeLessThan(fixedEce);
  });
});

describe('split-conformal prediction sets', () => {
  it('LAC and APS reach 1 - alpha coverage within sampling error', () => {
    const k = 6;
    const cal = syntheticClassifier({ n: 3000, classCount: k, temperature: 1, seed: 31 });
    const test = syntheticClassifier({ n: 6000, classCount: k, temperature: 1, seed: 32 });
    const calP = scoresFromLogits(cal.logits, k, cal.labels).probabilities;
    const testP = scoresFromLogits(test.logits, k, test.labels).probabilities;
    for (const alpha of [0.05, 0.1, 0.2]) {
      for (const score of ['lac', 'aps'] as const) {
        const params = fitConformal(calP, cal.labels, k, alpha, score, { randomized: score === 'aps', seed: 2 });
        const { coverage, meanSetSize } = empiricalCoverage(predictionSets(params, testP, k, 3), test.labels, k);
        const tolerance = 4 * Math.sqrt((alpha * (1 - alpha)) / 6000) + 1 / 3001;
        expect(coverage, `${score} alpha ${alpha}`).toBeGreaterThan(1 - alpha - tolerance);
        expect(coverage, `${score} alpha ${alpha}`).toBeLessThan(1 - alpha + tolerance + 0.01);
        expect(meanSetSize).toBeGreaterThan(0.5);
      }
    }
  });
});
