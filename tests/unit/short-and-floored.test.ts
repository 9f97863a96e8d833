/**
 * Numbers that agree with themselves (issue 27, deliverable 6b-d): calibrators never output an exact
 * zero (the probability floor, probability-floor.ts), a metric that needs more frames says so and
 * the rest are computed, and the step probe says "below the noise floor" for a response that never
 * leaves its noise band.
 */
import { describe, expect, it } from 'vitest';
import { calibrateLogits, fitCalibrator } from '../../src-shared/calibrators';
import { PROBABILITY_FLOOR } from '../../src-shared/calibrators/probability-floor';
import { isotonicAt } from '../../src-shared/calibrators/isotonic-regression';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate/gate-settings';
import { summariseStepProbe } from '../../src-shared/probes/step-probe-summary';
import { metricSuite, presetMetrics } from '../../src-shared/metrics/metric-suite';
import { scoresFromLogits } from '../../src-shared/metrics/scores';
import { seededRandom } from '../../src-shared/random';
import { metricsSnapshot } from '../../src-main/core/use-cases/metrics-snapshot';
import { plainSource } from '../../src-main/core/use-cases/view-replay';
import { syntheticTrace } from '../support/synthetic-trace';
import { confidentlyWrong, zeroProne } from '../support/zero-prone';

const meanNll = (logProbabilities: Float64Array, labels: Int32Array, k: number) =>
  labels.reduce((sum, y, i) => sum - logProbabilities[i * k + y], 0) / labels.length;

describe('the probability floor', () => {
  it.each(['isotonic', 'histogram-binning', 'scaling-binning', 'platt', 'beta'] as const)(
    '%s: no zero probability, every one at least 1e-6, finite NLL where the fit gives zeros',
    (method) => {
      const fit = zeroProne(400, 1);
      const spec = fitCalibrator(method, fit.logits, fit.labels, fit.k).spec;
      // held-out frames whose true class the training data made impossible (confident wrong answers)
      const test = confidentlyWrong(200, 2, 20);
      const out = calibrateLogits(spec, test.logits, test.k);
      const probabilities = Array.from(out, Math.exp);
      expect(Math.min(...probabilities)).toBeGreaterThanOrEqual(PROBABILITY_FLOOR * (1 - 1e-12));
      for (let i = 0; i < 200; i++) {
        const row = probabilities.slice(i * 3, i * 3 + 3);
        expect(row.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
      }
      const nll = meanNll(out, test.labels, test.k);
      expect(Number.isFinite(nll)).toBe(true);
      expect(nll).toBeLessThan(-Math.log(PROBABILITY_FLOOR));
    },
  );

  it('isotonic regression itself gives an exact 0 there (what the floor replaces)', () => {
    const fit = zeroProne(400, 1);
    const spec = fitCalibrator('isotonic', fit.logits, fit.labels, fit.k).spec;
    if (spec.method !== 'isotonic') throw new Error('expected an isotonic spec');
    const map = { x: Float64Array.from(spec.perClass[0].x), y: Float64Array.from(spec.perClass[0].y) };
    expect(isotonicAt(map, 1e-4)).toBe(0);
  });

  it('leaves the row methods unchanged (temperature: a softmax of finite logits)', () => {
    const { logits, k } = zeroProne(50, 3);
    const out = calibrateLogits({ method: 'temperature', temperature: 2 }, logits, k);
    for (let i = 0; i < 50; i++) {
      let lse = -Infinity;
      for (let c = 0; c < k; c++) lse = Math.max(lse, logits[i * k + c] / 2);
      let sum = 0;
      for (let c = 0; c < k; c++) sum += Math.exp(logits[i * k + c] / 2 - lse);
      for (let c = 0; c < k; c++) expect(out[i * k + c]).toBeCloseTo(logits[i * k + c] / 2 - lse - Math.log(sum), 12);
    }
  });
});

describe('not enough frames', () => {
  const settings = DEFAULT_GATE_SETTINGS;
  it.each([10, 1])('%i frames: the suite and presets run; the metrics that need more say so by name', (frames) => {
    const trace = syntheticTrace({ frames, seed: 2 });
    const scores = scoresFromLogits(Float64Array.from(trace.zDyn), trace.classCount, trace.labels!);
    const suite = metricSuite(scores, { includeTce: true });
    const short = suite.filter((m) => m.unavailable !== undefined);
    expect(short.map((m) => [m.name, m.unavailable])).toEqual([
      ['TCE', { reason: 'not enough frames', needed: 11, got: frames }],
    ]);
    expect(
      suite.filter((m) => m.unavailable === undefined).every((m) => !Number.isNaN(m.value) || m.name === 'AUROC'),
    ).toBe(true);
    const kumar = presetMetrics('kumar-debiased-l2-15', scores);
    expect(kumar.map((m) => m.unavailable)).toEqual([
      { reason: 'not enough frames', needed: 15, got: frames },
      { reason: 'not enough frames', needed: 15, got: frames },
    ]);
    // the same identities as with enough frames
    const enough = syntheticTrace({ frames: 15, seed: 2 });
    const full = presetMetrics(
      'kumar-debiased-l2-15',
      scoresFromLogits(Float64Array.from(enough.zDyn), 10, enough.labels!),
    );
    expect(kumar.map((m) => m.identity)).toEqual(full.map((m) => m.identity));
    // the desk's snapshot: TCE named with its reason, the rest with values
    const snapshot = metricsSnapshot(plainSource(trace), settings, { version: 1, recordingId: 1, calibrator: null });
    const tce = snapshot.values.find((v) => v.name === 'TCE')!;
    expect(tce.value).toBeNull();
    expect(tce.unavailable).toEqual({ reason: 'not enough frames', needed: 11, got: frames });
    expect(snapshot.values.find((v) => v.identity.startsWith('accuracy'))!.value).not.toBeNull();
  });
});

describe('the step probe below the noise floor', () => {
  const RATE = 30;
  const FRAMES = 300;
  const STEP = 150;
  /** g = its baseline plus noise far larger than the response to a 0.02 step of u*. */
  function noisy(response: number, noise: number) {
    const g: Float64Array[] = [];
    const uStar: Float64Array[] = [];
    for (let r = 0; r < 16; r++) {
      const random = seededRandom(50 + r);
      uStar.push(Float64Array.from({ length: FRAMES }, (_, t) => (t < STEP ? 0.5 : 0.52)));
      g.push(
        Float64Array.from(
          { length: FRAMES },
          (_, t) =>
            0.5 + (t >= STEP ? response * 0.02 * (1 - Math.exp(-(t - STEP) / 10)) : 0) + noise * (random() - 0.5),
        ),
      );
    }
    return { g, uStar, stepFrame: STEP, hSeconds: 1 / RATE };
  }

  it('says so and reports no settling time when the response never leaves the noise band', () => {
    const summary = summariseStepProbe(noisy(1, 0.4), DEFAULT_GATE_SETTINGS, { replicates: 200 });
    expect(summary.noiseFloor.belowNoiseFloor).toBe(true);
    expect(summary.noiseFloor.note).toMatch(/^below the noise floor/);
    expect(summary.measured.settlingTimeSeconds).toBeNull();
    expect(summary.measured.riseTimeSeconds).toBeNull();
    expect(summary.predictedInfo.settlingTimeSeconds).not.toBeNull();
  });

  it('measures a response that stands out of its noise', () => {
    const summary = summariseStepProbe(noisy(1, 0.001), DEFAULT_GATE_SETTINGS, { replicates: 200 });
    expect(summary.noiseFloor.belowNoiseFloor).toBe(false);
    expect(summary.noiseFloor.note).toBeNull();
    expect(summary.measured.riseTimeSeconds).not.toBeNull();
  });
});
