/**
 * Numbers that agree with themselves (issue 27, deliverable 6a): every headline interval contains
 * its estimate, or is widened to it and says why. Wilson and Clopper-Pearson against their closed
 * forms and Newcombe (1998)'s published table (tests/fixtures/PROVENANCE.md); the bias-corrected
 * basic bootstrap against its definition; containment on synthetic sets with small bins, where the
 * plain percentile interval of binned ECE lies above the plug-in estimate.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate/gate-settings';
import { bootstrapInterval, resample } from '../../src-shared/metrics/bootstrap';
import { expectedCalibrationError } from '../../src-shared/metrics/calibration-error';
import { binnedStatistics } from '../../src-shared/metrics/column-statistics';
import { l2CeIntervalsWithBootstrap } from '../../src-shared/metrics/calibration-error-interval';
import { headlineFigures, meanOverGroups, headlineStatistics } from '../../src-shared/metrics/headline-intervals';
import {
  biasCorrectedBasicInterval,
  clopperPearsonInterval,
  wilsonInterval,
} from '../../src-shared/metrics/interval-variants';
import { EQUAL_WIDTH_15 } from '../../src-shared/metrics/metric-suite';
import { scoresFromLogits, topLabelScores } from '../../src-shared/metrics/scores';
import { seededRandom } from '../../src-shared/random';
import { metricsSnapshot } from '../../src-main/core/use-cases/metrics-snapshot';
import { plainSource } from '../../src-main/core/use-cases/view-replay';
import { syntheticTrace } from '../support/synthetic-trace';

const Z975 = 1.959963984540054;

/**
 * n calibrated samples: top-class probability p ~ U(0.4, 1), the rest shared equally, and the
 * label the top class with probability p (accuracy 1: always). The binned ECE of such a set is
 * its estimator's upward bias alone.
 */
function smallSet(n: number, seed: number, accuracy: number | null = null) {
  const k = 10;
  const random = seededRandom(seed);
  const logits = new Float64Array(n * k);
  const labels = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const p = 0.4 + 0.6 * random();
    const top = Math.floor(random() * k);
    const correct = accuracy === null ? random() < p : accuracy === 1;
    labels[i] = correct ? top : (top + 1 + Math.floor(random() * (k - 1))) % k;
    for (let c = 0; c < k; c++) logits[i * k + c] = Math.log(c === top ? p : (1 - p) / (k - 1));
  }
  const scores = scoresFromLogits(logits, k, labels);
  return { scores, top: topLabelScores(scores) };
}

describe('a proportion: Wilson and Clopper-Pearson', () => {
  it('62 of 62 correct: Wilson [0.9417, 1] (n / (n + z^2)), Clopper-Pearson [0.9422, 1] ((a/2)^(1/n))', () => {
    const wilson = wilsonInterval(1, 62);
    expect(wilson.lo).toBeCloseTo(62 / (62 + Z975 * Z975), 12);
    expect(wilson.lo).toBeCloseTo(0.9417, 4);
    expect(wilson.hi).toBe(1);
    const cp = clopperPearsonInterval(62, 62);
    expect(cp.lo).toBeCloseTo(0.025 ** (1 / 62), 12);
    expect(cp.lo).toBeCloseTo(0.9422, 4);
    expect(cp.hi).toBe(1);
  });

  // Newcombe (1998), Statistics in Medicine 17:857-872, Table I: methods 1 (Wilson, "score") and
  // 5 (Clopper-Pearson, "exact"), 95 %, to 4 decimals.
  it.each([
    [81, 263, [0.2553, 0.3662], [0.2527, 0.3676]],
    [15, 148, [0.0624, 0.1605], [0.0578, 0.1617]],
    [0, 20, [0, 0.1611], [0, 0.1684]],
    [1, 29, [0.0061, 0.1718], [0.0009, 0.1776]],
  ])('%i of %i: Wilson and Clopper-Pearson as Newcombe (1998) tabulates them', (x, n, w, c) => {
    const wilson = wilsonInterval(x / n, n);
    expect([wilson.lo, wilson.hi].map((v) => Number(v.toFixed(4)))).toEqual(w);
    const cp = clopperPearsonInterval(x, n);
    expect([cp.lo, cp.hi].map((v) => Number(v.toFixed(4)))).toEqual(c);
  });

  it('the headline accuracy of 62 of 62 is Wilson non-degenerate, and so is a mean over groups', () => {
    const set = smallSet(62, 3, 1);
    expect(set.top.correct.every((c) => c === 1)).toBe(true);
    const accuracy = headlineFigures(set.scores, set.top).find((f) => f.name === 'accuracy')!;
    expect(accuracy.value).toBe(1);
    expect(accuracy.lo).toBeCloseTo(0.9417, 4);
    expect(accuracy.hi).toBe(1);
    expect(accuracy.method).toBe('95 % Wilson score interval, n = 62');
    // two groups of 62: Kish's effective n is 124, the pooled Wilson interval
    const statistics = headlineStatistics(set.scores, set.top);
    const mean = meanOverGroups([statistics, statistics], [62, 62]).find((f) => f.name === 'accuracy')!;
    expect(mean.lo).toBeCloseTo(124 / (124 + Z975 * Z975), 10);
    expect(mean.method).toMatch(/Wilson score interval of the mean over 2 groups, effective n .* = 124/);
  });
});

describe('binned ECE: the bias-corrected basic bootstrap', () => {
  it('is [2t - q(0.975), 2t - q(0.025)] clipped at 0, widened to t with a note when it lies below t', () => {
    // draws 0.30, 0.31, ..., 1.29 (100): q(0.025) = 0.32475, q(0.975) = 1.26525 (numpy 'linear')
    const draws = () => Float64Array.from({ length: 100 }, (_, i) => 0.3 + i / 100);
    const symmetric = biasCorrectedBasicInterval(0.795, draws(), 0.95, '100 resamples');
    expect(symmetric.lo).toBeCloseTo(2 * 0.795 - 1.26525, 12);
    expect(symmetric.hi).toBeCloseTo(2 * 0.795 - 0.32475, 12);
    expect(symmetric.note).toBeUndefined();
    // every draw above t = 0.2: the basic interval [0, 0.07525] lies below it; widened to [0, 0.2]
    const above = biasCorrectedBasicInterval(0.2, draws(), 0.95, '100 resamples');
    expect(above.lo).toBe(0);
    expect(above.hi).toBe(0.2);
    expect(above.note).toMatch(/above the plug-in estimate by 0\.595 .*\[0\.000, 0\.07525\].*widened to contain it/);
    expect(above.method).toMatch(/^95 % bias-corrected basic bootstrap \[2 t - q\(0\.975\), 2 t - q\(0\.025\)\]/);
  });

  it('contains the plug-in ECE on small sets where the percentile interval excludes it', () => {
    let percentileExcluded = 0;
    for (const n of [20, 40, 80, 160]) {
      for (let seed = 1; seed <= 10; seed++) {
        const { scores, top } = smallSet(n, seed);
        const figures = headlineFigures(scores, top, { seed });
        for (const f of figures) {
          expect(f.lo, `${f.identity}, n ${n}, seed ${seed}`).toBeLessThanOrEqual(f.value);
          expect(f.hi, `${f.identity}, n ${n}, seed ${seed}`).toBeGreaterThanOrEqual(f.value);
          if (f.lo === f.value || f.hi === f.value) expect(f.note ?? f.method).toBeTruthy();
        }
        const ece = figures.find((f) => f.name === 'ECE')!;
        const plain = bootstrapInterval(
          n,
          (i) =>
            expectedCalibrationError(
              binnedStatistics(resample(top.confidence, i), resample(top.correct, i), EQUAL_WIDTH_15),
            ),
          { seed },
        );
        if (plain.lo > ece.value) percentileExcluded++;
        const l2 = l2CeIntervalsWithBootstrap(top.confidence, top.correct, EQUAL_WIDTH_15);
        expect(l2.bootstrap.lo).toBeLessThanOrEqual(l2.asymptotic.estimate);
        expect(l2.bootstrap.hi).toBeGreaterThanOrEqual(l2.asymptotic.estimate);
        expect(l2.asymptotic.lo).toBeLessThanOrEqual(l2.asymptotic.estimate);
        expect(l2.asymptotic.hi).toBeGreaterThanOrEqual(l2.asymptotic.estimate);
      }
    }
    // the failure this replaces: the percentile interval lay wholly above the estimate
    expect(percentileExcluded).toBeGreaterThan(0);
  });

  it('every interval of the desk snapshot contains its value (synthetic trace, 60 and 3,000 frames)', () => {
    for (const frames of [60, 3000]) {
      const snapshot = metricsSnapshot(plainSource(syntheticTrace({ frames, seed: 4 })), DEFAULT_GATE_SETTINGS, {
        version: 1,
        recordingId: 1,
        calibrator: null,
      });
      expect(snapshot.intervals.length).toBe(6);
      for (const interval of snapshot.intervals) {
        const value =
          snapshot.values.find((v) => v.identity === interval.identity)?.value ??
          // the U-statistic's value is its square root clipped at 0, keyed by its own identity
          null;
        expect(value, interval.identity).not.toBeNull();
        expect(interval.lo, `${interval.identity} ${interval.method}`).toBeLessThanOrEqual(value!);
        expect(interval.hi, `${interval.identity} ${interval.method}`).toBeGreaterThanOrEqual(value!);
      }
    }
  });
});
