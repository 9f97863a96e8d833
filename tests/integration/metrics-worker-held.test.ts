/**
 * The metrics worker holds the current recording (use-cases/held-recording.ts, issue 29): the
 * client sends it whole once, then only the rows added since with the labels, on the real built
 * worker. A snapshot after rows were added and labels changed equals one of the whole recording
 * computed in-process; and with more than 100 classes a knob turn takes the fused-score tables:
 * every figure it computes equals the full-vector snapshot's within 1e-9, and what reads every
 * class is marked not computed (computed when asked for).
 */
import { DEFAULT_HYSTERESIS_FRAMES } from '../../src-shared/calibrators/conditional-calibration';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate/gate-settings';
import type { Trace } from '../../src-shared/trace/trace';
import { sliceTrace } from '../../src-shared/trace/trace-slice';
import { metricsSnapshot } from '../../src-main/core/use-cases/metrics-snapshot';
import { MetricsWorkerClient, type RecordingSource } from '../../src-main/core/use-cases/metrics-worker-client';
import { plainSource } from '../../src-main/core/use-cases/view-replay';
import { syntheticTrace } from '../support/synthetic-trace';

/** A recording that grows over `full` and whose labels can change, as Recording is to the client. */
function growing(full: Trace, frames: number): RecordingSource & { frames: number; trace(): Trace } {
  const labels = full.labels!.slice();
  const source = {
    frames,
    get frameCount() {
      return source.frames;
    },
    trace: () => ({ ...sliceTrace(full, 0, source.frames, 'copy'), labels: labels.slice(0, source.frames) }),
    copyAll: () => source.trace(),
    copyFrom: (from: number) => ({
      rows: sliceTrace(full, from, source.frames, 'copy'),
      labels: labels.slice(0, source.frames),
    }),
    relabel: (frame: number, label: number) => (labels[frame] = label),
  };
  return source as RecordingSource & { frames: number; trace(): Trace; relabel(frame: number, label: number): void };
}

const client = new MetricsWorkerClient();
afterAll(() => client.close());
const settings = { ...DEFAULT_GATE_SETTINGS, zeta: 0.5, wnRadPerSec: 5 };
const basis = { version: 3, recordingId: 9, calibrator: null };

describe('the metrics worker holds the recording', () => {
  it('a snapshot after added rows and changed labels equals the whole recording in-process', async () => {
    const full = syntheticTrace({ frames: 3000, classCount: 10, seed: 11 });
    const recording = growing(full, 1000) as ReturnType<typeof growing> & { relabel(f: number, l: number): void };
    const copy = { recording, version: 3, recordingId: 9, calibrator: null };
    const options = { groupBy: 'severity' as const, detail: 'light' as const, classes: 'auto' as const };
    const first = await client.snapshot(copy, settings, options);
    expect(first.frameCount).toBe(1000);
    recording.frames = 3000;
    recording.relabel(10, (full.labels![10]! + 1) % 10);
    recording.relabel(2500, (full.labels![2500]! + 3) % 10);
    const second = await client.snapshot(copy, settings, options);
    const local = metricsSnapshot(plainSource(recording.trace()), settings, basis, options);
    expect(second.frameCount).toBe(3000);
    expect(second.values).toEqual(local.values);
    expect(second.reliability).toEqual(local.reliability);
  });

  it('with 200 classes a knob turn uses the tables: the same figures within 1e-9, classwise ones marked', async () => {
    const full = syntheticTrace({ frames: 1500, classCount: 200, seed: 12 });
    const recording = growing(full, 1500);
    const copy = { recording, version: 1, recordingId: 10, calibrator: null };
    const options = { groupBy: 'predicted-class' as const, detail: 'full' as const };
    const knobTurn = await client.snapshot(copy, settings, { ...options, classes: 'auto' });
    const everyClass = await client.snapshot(copy, settings, { ...options, classes: 'all' });
    expect(knobTurn.values.map((v) => v.identity)).toEqual(everyClass.values.map((v) => v.identity));
    let compared = 0;
    for (const [i, value] of knobTurn.values.entries()) {
      const exact = everyClass.values[i]!;
      if (value.unavailable !== undefined) {
        expect(value.unavailable).toEqual({ reason: 'every class not computed', classCount: 200 });
        expect(exact.unavailable).toBeUndefined();
        continue;
      }
      compared++;
      expect(Math.abs(value.value! - exact.value!), value.identity).toBeLessThan(1e-9);
    }
    expect(compared).toBeGreaterThan(20);
    expect(knobTurn.values.filter((v) => v.unavailable !== undefined).map((v) => v.name)).toEqual([
      'classwise ECE',
      'marginal debiased L2-CE',
      'classwise ECE',
      'marginal debiased L2-CE',
    ]);
    expect(knobTurn.classReliability).toEqual([]);
    expect(everyClass.classReliability).toHaveLength(200);
    // the groups' headline figures agree too
    expect(knobTurn.groups.map((g) => g.key)).toEqual(everyClass.groups.map((g) => g.key));
    knobTurn.groups.forEach((g, i) =>
      g.values.forEach((v, j) =>
        expect(Math.abs(v.value! - everyClass.groups[i]!.values[j]!.value!)).toBeLessThan(1e-9),
      ),
    );
    // and a temperature calibrator stays on the tables
    const calibrated = { ...copy, calibrator: { method: 'temperature' as const, temperature: 1.6 } };
    const t1 = await client.snapshot(calibrated, settings, { ...options, classes: 'auto' });
    const t2 = await client.snapshot(calibrated, settings, { ...options, classes: 'all' });
    t1.values.forEach((v, i) => {
      if (v.unavailable === undefined) expect(Math.abs(v.value! - t2.values[i]!.value!)).toBeLessThan(1e-9);
    });
  });
});

describe('a cancelled view in the metrics worker', () => {
  it('stops at its next resample; the worker, its recording and its tables are kept', async () => {
    const full = syntheticTrace({ frames: 300_000, classCount: 10, seed: 13 });
    const recording = growing(full, 300_000);
    const copy = { recording, version: 1, recordingId: 11, calibrator: null };
    const options = { groupBy: 'none' as const, classes: 'auto' as const };
    await client.snapshot(copy, settings, { ...options, detail: 'light' });
    const starts = client.workerStarts;
    const controller = new AbortController();
    // seconds of resampling at this length: cancelled on the next turn, it cannot have finished
    const intervals = client.snapshot({ ...copy, signal: controller.signal }, settings, { ...options, detail: 'full' });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await expect(intervals).rejects.toMatchObject({ code: 'CANCELLED' });
    const next = await client.snapshot({ ...copy, version: 2 }, settings, { ...options, detail: 'light' });
    expect(next.settingsVersion).toBe(2);
    expect(client.workerStarts).toBe(starts);
  }, 120_000);

  it('a calibrator comparison stops before its next fit; the worker is kept', async () => {
    const full = syntheticTrace({ frames: 60_000, classCount: 10, seed: 17 });
    const copy = { recording: growing(full, 60_000), version: 1, recordingId: 12, calibrator: null };
    await client.snapshot(copy, settings, { groupBy: 'none', classes: 'auto', detail: 'light' });
    const starts = client.workerStarts;
    const controller = new AbortController();
    // every method, seconds of fitting at this length: cancelled at once, it cannot have finished
    const fits = client.compareCalibrators({ ...copy, signal: controller.signal }, settings, {
      methods: ['temperature', 'vector', 'matrix', 'dirichlet', 'isotonic', 'histogram-binning'],
      split: { kind: 'time', evaluateFraction: 0.3 },
      conditionBy: ['corruption'],
      conditionHysteresisFrames: DEFAULT_HYSTERESIS_FRAMES,
    });
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    await expect(fits).rejects.toMatchObject({ code: 'CANCELLED' });
    const next = await client.snapshot({ ...copy, version: 2 }, settings, {
      groupBy: 'none',
      classes: 'auto',
      detail: 'light',
    });
    expect(next.settingsVersion).toBe(2);
    expect(client.workerStarts).toBe(starts);
  }, 120_000);
});
