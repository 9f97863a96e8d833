/**
 * The metric suite on two threads (src-main/core/metrics/parallel-metric-suite.ts) against the
 * one-thread suite of src-shared: the same values bit for bit (the helper is a real worker thread
 * on SharedArrayBuffers), bad logits refused as the one-thread path refuses them wherever they
 * sit, and a refusal does not leave the helper's late answer to be taken for the next request's;
 * and the desk's knob-turn snapshot with its top-label tasks on the helper (the metrics worker's
 * path) equals the one-thread snapshot; and a trace's fused output scored top-label only on both
 * threads (`knob metrics --trace` of many classes) equals the one-thread scores.
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
import { topLabelScoresOfFrames } from '../../src-shared/trace/trace-scores';
import type { Trace } from '../../src-shared/trace/trace';
import { tableOfRows, type TableRowsRequest } from '../../src-main/core/metrics/table-rows';
import { compareCalibratorsAlongside, compareCalibratorsOn } from '../../src-main/core/use-cases/compare-calibrators';

const nothingHeld: HeldRecording | null = null;

/** A trace with its logits in shared memory, as readTraceFile reads them: the helper reads them in place. */
function inSharedMemory(trace: Trace): Trace {
  const shared = (values: Float32Array) => {
    const out = new Float32Array(new SharedArrayBuffer(values.byteLength));
    out.set(values);
    return out;
  };
  return { ...trace, zStatic: shared(trace.zStatic), zDyn: shared(trace.zDyn) };
}

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

  it("scores a trace's fused output top-label only on both threads, bit for bit, logits read in place", async () => {
    const made = syntheticTrace({ frames: PARALLEL_MIN_SAMPLES * 1.5 + 3_001, classCount: 120, seed: 37 });
    const n = made.frameCount;
    const trace = inSharedMemory(made);
    // two frames of every three, the gate somewhere in and beyond [0, 1]
    const frames = Int32Array.from({ length: Math.floor(n / 3) * 2 }, (_, j) => j + (j >> 1));
    const g = Float64Array.from({ length: n }, (_, i) => ((i * 7919) % 1300) / 1000 - 0.15);
    const two = await suite.topLabelScoresOfFrames(trace, g, frames);
    expect(suite.fallback).toBeNull();
    const one = topLabelScoresOfFrames(made, g, frames);
    expect(two.scores).toEqual(one.scores);
    expect(two.top).toEqual(one.top);
    // logits not in shared memory: this thread alone, and says why
    const alone = await suite.topLabelScoresOfFrames(made, g, frames);
    expect(suite.fallback).toMatch(/not in shared memory/);
    expect(alone.top).toEqual(one.top);
  });

  it("a long recording's first knob turn builds its table on both threads, to the same snapshot", async () => {
    const made = syntheticTrace({ frames: 24_001, classCount: 120, seed: 41 });
    const trace = inSharedMemory(made);
    const two = HeldRecording.apply(nothingHeld, { recordingId: 3, kind: 'whole', trace });
    const one = HeldRecording.apply(nothingHeld, { recordingId: 3, kind: 'whole', trace });
    const basis = { version: 1, recordingId: 3, calibrator: null };
    const options = { groupBy: 'none' as const, detail: 'light' as const };
    const progress: number[] = [];
    const viewed = await metricsSnapshotOnTwoThreads(
      two,
      DEFAULT_GATE_SETTINGS,
      basis,
      options,
      (done) => progress.push(done),
      suite,
    );
    // this thread built the first half, reporting it; the merge made the table whole
    expect(progress.at(-1)).toBe(24_001);
    expect(progress.filter((done) => done < 24_001).every((done) => done <= 12_001)).toBe(true);
    expect(two.table(1, true).entryCount).toBe(24_001);
    const alone = metricsSnapshot(one, DEFAULT_GATE_SETTINGS, basis, options);
    expect({ ...viewed, computeMs: 0 }).toEqual({ ...alone, computeMs: 0 });
    expect(viewed.values.find((v) => v.name === 'classwise ECE')?.unavailable?.reason).toBe('every class not computed');
  });

  it("a cancelled first view keeps the rows built and the helper's share in flight for the next one", async () => {
    const made = syntheticTrace({ frames: 20_001, classCount: 120, seed: 43 });
    const trace = inSharedMemory(made);
    const held = HeldRecording.apply(nothingHeld, { recordingId: 4, kind: 'whole', trace });
    let shares = 0;
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    // the other thread's share, answered only when released: a cancel must not wait for it
    const share = async (request: TableRowsRequest) => {
      shares++;
      await released;
      return tableOfRows(request);
    };
    const controller = new AbortController();
    const cancelled = held.tableOnTwoThreads(1, true, share, () => controller.abort(), controller.signal);
    await expect(cancelled).rejects.toMatchObject({ code: 'CANCELLED' });
    const kept = held.table(1, true, undefined, undefined, 0).entryCount;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(10_000);
    // an already cancelled view hands nothing over
    await expect(held.tableOnTwoThreads(1, true, share, undefined, controller.signal)).rejects.toMatchObject({
      code: 'CANCELLED',
    });
    const next = held.tableOnTwoThreads(1, true, share);
    release();
    await next;
    expect(shares).toBe(1);
    const whole = held.table(1, true);
    expect(whole.entryCount).toBe(20_001);
    const alone = HeldRecording.apply(nothingHeld, { recordingId: 4, kind: 'whole', trace }).table(1, true);
    expect(whole.parts()).toEqual(alone.parts());
  });
});

describe('a calibrator comparison on two threads (issue 32)', () => {
  it('is the one-thread comparison, method for method, in the order asked', async () => {
    const data = syntheticClassifier({ n: 2000, classCount: 10, temperature: 1.5, seed: 9 });
    const subject = {
      name: 'the synthetic output',
      logits: data.logits,
      labels: data.labels,
      classCount: 10,
      features: null,
      conditions: null,
    };
    const methods = ['temperature', 'dirichlet', 'isotonic', 'pts', 'platt'] as const;
    const split = { kind: 'time', evaluateFraction: 0.3 } as const;
    const asked: string[][] = [];
    const steps: Array<[number, number]> = [];
    const both = await compareCalibratorsAlongside(
      subject,
      methods,
      split,
      { onProgress: (done, total) => steps.push([done, total]) },
      (elsewhere) => {
        asked.push(elsewhere);
        return suite.startCalibrators({ ...subject, methods: elsewhere, split });
      },
    );
    // the heavy methods apart: Dirichlet on one thread, PTS on the other
    expect(asked).toHaveLength(1);
    expect(asked[0]!.includes('dirichlet')).not.toBe(asked[0]!.includes('pts'));
    expect(both.methods.map((m) => m.method)).toEqual([...methods]);
    expect(both).toEqual(compareCalibratorsOn(subject, methods, split));
    expect(steps.every(([done, total]) => total === methods.length && done <= total)).toBe(true);
  }, 120_000);
});

describe('a cancelled two-thread calibrator comparison', () => {
  it('stops both shares, and the helper serves the next request at once', async () => {
    const data = syntheticClassifier({ n: 3000, classCount: 10, temperature: 1.5, seed: 10 });
    const subject = { name: 'the synthetic output', ...data, classCount: 10, features: null, conditions: null };
    const split = { kind: 'time', evaluateFraction: 0.3 } as const;
    const cancel = new AbortController();
    let helperSignal: AbortSignal | null = null;
    const cancelled = compareCalibratorsAlongside(
      subject,
      ['dirichlet', 'pts', 'temperature', 'isotonic'],
      split,
      // this thread's first step cancels the comparison
      { signal: cancel.signal, onProgress: () => cancel.abort() },
      (methods, signal) => {
        helperSignal = signal;
        return suite.startCalibrators({ ...subject, methods, split }, signal);
      },
    );
    await expect(cancelled).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(helperSignal!.aborted).toBe(true);
    // the helper stopped within a step: the next computation on it runs and answers
    const next = await suite.fromLogits(data.logits, 10, data.labels);
    expect(next.metrics.length).toBeGreaterThan(10);
  }, 120_000);
});
