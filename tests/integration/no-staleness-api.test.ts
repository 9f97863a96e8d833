/**
 * No silent staleness (issue 27, 7), through the real backend and the shipped model:
 * `recording.series` carries the rolling accuracy and mean confidence at the knobs now (and the
 * output calibrator), as an independent replay computes them over the last 300 labelled frames;
 * `tune.run` with `within` (the desk's knob ranges) tries and reports only settings inside them,
 * where the default grid goes past the zeta knob's end; bounds the grid cannot meet are refused.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { compileCalibrator, type CalibratorSpec } from '../../src-shared/calibrators/output-calibrator';
import type { GateSettings } from '../../src-shared/gate/gate-settings';
import { replay } from '../../src-shared/trace/replay';
import type { Trace } from '../../src-shared/trace/trace';
import { DESK_KNOB_RANGES, outsideKnobRanges } from '../../src-shared/tuning/knob-ranges';

const backend = new KnobBackend();
const dir = mkdtempSync(join(tmpdir(), 'knob-no-staleness-'));
let trace: Trace;

beforeAll(async () => {
  await backend.handle('model.load', { path: 'default', executionProviders: ['cpu'] });
  await backend.handle('source.open', { kind: 'embedded' });
  await backend.handle('stream.runOffline', { maxFrames: 900, discard: true });
  const path = join(dir, 'recording.arrow');
  await backend.handle('trace.save', { path });
  trace = (await readTraceFile(path)).trace;
}, 120_000);
afterAll(async () => {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Accuracy and mean top-label confidence over the last 300 labelled frames up to `frame`, by replay. */
function rollingAt(gate: GateSettings, calibrator: CalibratorSpec | null, frame: number): [number, number] {
  const out = replay(trace, gate, { calibrator: calibrator === null ? null : compileCalibrator(calibrator) });
  const labelled: number[] = [];
  for (let i = frame; i >= 0 && labelled.length < 300; i--) if (trace.labels![i] >= 0) labelled.push(i);
  const correct = labelled.filter((i) => out.top1[i] === trace.labels![i]).length;
  const confidence = labelled.reduce((sum, i) => sum + out.confidence[i], 0);
  return [correct / labelled.length, confidence / labelled.length];
}

describe('recording.series: the rolling figures at the knobs now', () => {
  it('follows a knob change and the output calibrator, as a replay computes them', async () => {
    const frameOf = (t: number) => trace.timestampsSeconds.indexOf(t);
    const check = async (gate: GateSettings, calibrator: CalibratorSpec | null) => {
      const series = await backend.handle('recording.series', { maxPoints: 400 });
      expect(series.rollingWindowFrames).toBe(300);
      expect(series.rollingAccuracy).toHaveLength(series.tSeconds.length);
      expect(series.rollingConfidence).toHaveLength(series.tSeconds.length);
      // every frame of the embedded stream is labelled: no gaps
      expect(series.rollingAccuracy.every((v) => v !== null)).toBe(true);
      for (const at of [0, Math.floor(series.tSeconds.length / 2), series.tSeconds.length - 1]) {
        const [accuracy, confidence] = rollingAt(gate, calibrator, frameOf(series.tSeconds[at]));
        expect(series.rollingAccuracy[at]).toBeCloseTo(accuracy, 10);
        expect(series.rollingConfidence[at]).toBeCloseTo(confidence, 10);
      }
      return series;
    };
    const first = await backend.handle('knobs.get', {});
    const before = await check(first.gate, null);
    // a slow, heavily damped gate: g lags the step, the fused output and its confidence with it
    const knobs = await backend.handle('knobs.set', { gate: { zeta: 2.5, wnRadPerSec: 0.3 } });
    const after = await check(knobs.gate, null);
    expect(after.settingsVersion).toBe(knobs.version);
    expect(after.rollingConfidence).not.toEqual(before.rollingConfidence);
    const temperature: CalibratorSpec = { method: 'temperature', temperature: 2 };
    await backend.handle('calibrator.set', { calibrator: temperature });
    const calibrated = await check(knobs.gate, temperature);
    // a temperature of 2 flattens the output: a lower mean confidence, the same accuracy
    expect(calibrated.rollingConfidence.at(-1)!).toBeLessThan(after.rollingConfidence.at(-1)!);
    expect(calibrated.rollingAccuracy.at(-1)).toBeCloseTo(after.rollingAccuracy.at(-1)!, 12);
    await backend.handle('calibrator.set', { calibrator: null });
    await backend.handle('knobs.set', { gate: first.gate });
  }, 60_000);
});

describe('tune.run within the knobs ranges', () => {
  it('the default grid passes the zeta knob; `within` keeps every setting inside the ranges', async () => {
    const request = { metric: 'ece' as const, constraints: { maxSettlingSeconds: 3 } };
    const free = await backend.handle('tune.run', request);
    expect(Math.max(...free.grid.map((c) => c.point.settings.zeta))).toBeGreaterThan(DESK_KNOB_RANGES.zeta.max);
    const bounded = await backend.handle('tune.run', { ...request, within: DESK_KNOB_RANGES });
    const reported = [bounded.best, ...bounded.grid, ...bounded.pareto].map((c) => c.point.settings);
    for (const settings of reported) expect(outsideKnobRanges(settings)).toBeNull();
    // the grid's top is the knob's end, exactly (not one ulp past it)
    expect(Math.max(...bounded.grid.map((c) => c.point.settings.zeta))).toBe(DESK_KNOB_RANGES.zeta.max);
    expect(outsideKnobRanges({ zeta: 4, wnRadPerSec: 6 })).toMatch(/ζ 4 is outside the knob's range \[0\.05, 3\]/);
  }, 120_000);

  it('refuses bounds the grid cannot meet, and bounds that are not a range', async () => {
    await expect(
      backend.handle('tune.run', { within: { zeta: { min: 5, max: 6 }, wnRadPerSec: { min: 0.1, max: 100 } } }),
    ).rejects.toMatchObject({
      code: 'INVALID_SETTINGS',
      message: expect.stringMatching(/the zeta grid \[0\.1, 4\] lies outside the bounds \[5, 6\]/),
    });
    await expect(
      backend.handle('tune.run', { within: { zeta: { min: 2, max: 1 }, wnRadPerSec: { min: 0.1, max: 100 } } }),
    ).rejects.toMatchObject({ message: expect.stringMatching(/min must not exceed max/) });
  });
});
