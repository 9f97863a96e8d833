/**
 * The metric suite on two threads (src-main/core/metrics/parallel-metric-suite.ts) against the
 * one-thread suite of src-shared: the same values bit for bit (the helper is a real worker thread
 * on SharedArrayBuffers), bad logits refused as the one-thread path refuses them wherever they
 * sit, and a refusal does not leave the helper's late answer to be taken for the next request's;
 * and the desk's knob-turn snapshot with its top-label tasks on the helper (the metrics worker's
 * path) equals the one-thread snapshot.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ParallelMetricSuite, PARALLEL_MIN_SAMPLES } from '../../src-main/core/metrics/parallel-metric-suite';
import { metricSuite } from '../../src-shared/metrics/metric-suite';
import { scoresFromLogits, scoresFromProbabilities } from '../../src-shared/metrics/scores';
import { syntheticClassifier } from '../support/synthetic-classifier';
import { syntheticTrace } from '../support/synthetic-trace';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate/gate-settings';
import { HeldRecording } from '../../src-main/core/use-cases/held-recording';
import { metricsSnapshot, metricsSnapshotOnTwoThreads } from '../../src-main/core/use-cases/metrics-snapshot';
import { plainSource } from '../../src-main/core/use-cases/view-replay';

const nothingHeld: HeldRecording | null = null;

const suite = new ParallelMetricSuite();
afterAll(() => suite.close());

describe('parallel metric suite', () => {
  const n = PARALLEL_MIN_SAMPLES + 10_001;
  const data = syntheticClassifier({ n, classCount: 10, temperature: 1.5, seed: 9 });

  it('gives the one-thread suite bit for bit, on float64 logits with TCE and on float32 logits', async () => {
    for (const [logits, options] of [
      [data.logits, { includeTce: true }],
      [Float32Array.from(data.logits), {}],
    ] as const) {
      const parallel = await suite.fromLogits(logits, 10, data.labels, options);
      expect(suite.fallback).toBeNull();
      const single = metricSuite(scoresFromLogits(logits, 10, data.labels), options);
      expect(parallel.metrics).toEqual(single);
      expect(parallel.metrics.length).toBeGreaterThan(30);
    }
  });

  it("refuses a non-finite logit in the helper's half, naming it, and then serves the next request", async () => {
    const bad = Float64Array.from(data.logits);
    bad[(n - 5) * 10 + 3] = Number.NaN;
    await expect(suite.fromLogits(bad, 10, data.labels)).rejects.toThrow(`logit 3 of sample ${n - 5} is not finite`);
    bad[(n - 5) * 10 + 3] = 0;
    bad[7 * 10 + 1] = Number.POSITIVE_INFINITY;
    await expect(suite.fromLogits(bad, 10, data.labels)).rejects.toThrow(/logit 1 of sample 7 is not finite/);
    const again = await suite.fromLogits(data.logits, 10, data.labels);
    expect(again.metrics).toEqual(metricSuite(scoresFromLogits(data.logits, 10, data.labels)));
    // bad input is the caller's error, not the helper's: the same helper serves on, none leaks
    const startsBefore = suite.helperStarts;
    bad[7 * 10 + 1] = 0;
    bad[(n - 1) * 10] = Number.NaN;
    for (let i = 0; i < 3; i++) await expect(suite.fromLogits(bad, 10, data.labels)).rejects.toThrow(/not finite/);
    expect(suite.helperStarts).toBe(startsBefore);
    await suite.fromLogits(data.logits, 10, data.labels);
    expect(suite.fallback).toBeNull();
  });

  it('reuses its shared copy of the logits for the next call of the same shape, with no stale rows', async () => {
    const other = syntheticClassifier({ n, classCount: 10, temperature: 0.7, seed: 10 });
    for (const set of [data, other, data]) {
      const parallel = await suite.fromLogits(set.logits, 10, set.labels);
      expect(parallel.metrics).toEqual(metricSuite(scoresFromLogits(set.logits, 10, set.labels)));
      expect(parallel.scores.logits).toBe(set.logits);
    }
  });

  it('gives the same suite from scores already computed (probabilities in, as knob metrics reads them)', async () => {
    const logitScores = scoresFromLogits(data.logits, 10, data.labels);
    const fromProbabilities = scoresFromProbabilities(logitScores.probabilities, 10, data.labels);
    for (const scores of [logitScores, fromProbabilities]) {
      expect(await suite.fromScores(scores)).toEqual(metricSuite(scores));
      expect(suite.fallback).toBeNull();
    }
  });

  it('runs small inputs on one thread and says why', async () => {
    const small = syntheticClassifier({ n: 2000, classCount: 4, temperature: 1, seed: 2 });
    const result = await suite.fromLogits(small.logits, 4, small.labels);
    expect(suite.fallback).toMatch(/fewer than/);
    expect(result.metrics).toEqual(metricSuite(scoresFromLogits(small.logits, 4, small.labels)));
  });

  it("a knob turn's snapshot with the top-label tasks on the helper equals the one-thread snapshot", async () => {
    const trace = syntheticTrace({ frames: PARALLEL_MIN_SAMPLES + 2_001, classCount: 6, seed: 31 });
    const held = HeldRecording.apply(nothingHeld, { recordingId: 2, kind: 'whole', trace });
    const basis = { version: 1, recordingId: 2, calibrator: null };
    for (const zeta of [0.4, 0.9]) {
      const settings = { ...DEFAULT_GATE_SETTINGS, zeta };
      const options = { groupBy: 'none' as const, detail: 'light' as const };
      const two = await metricsSnapshotOnTwoThreads(held, settings, basis, options, undefined, suite);
      expect(suite.fallback).toBeNull();
      const one = metricsSnapshot(plainSource(trace), settings, basis, options);
      expect({ ...two, computeMs: 0 }).toEqual({ ...one, computeMs: 0 });
      expect(two.values.filter((v) => v.name === 'classwise ECE' && v.unavailable === undefined)).toHaveLength(2);
    }
  });
});
