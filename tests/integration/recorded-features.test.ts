/**
 * The model's features end to end, with the shipped model and the real CLI: `knob run
 * --record-features` keeps the `features` output in the trace (Arrow), `knob calibrate` fits
 * density- and proximity-aware calibrators on it, `knob replay --settings` applies one, and
 * everything that cannot supply features refuses such a calibrator by name (a trace recorded
 * without them, the desk's live stream).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';

function knob(...args: string[]) {
  const result = spawnSync(process.execPath, ['bin/knob.mjs', ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const dir = mkdtempSync(join(tmpdir(), 'knob-features-'));
let backend: KnobBackend | null = null;
afterAll(async () => backend?.close());

describe('recorded features', () => {
  it('run keeps them, calibrate fits DAC and ProCal on them, replay applies DAC, and a trace without them is refused', async () => {
    const schedule = ['--schedule', 'step', '--corrupt', 'gaussian_noise', '--severity', '4'];
    const withFeatures = join(dir, 'with');
    const run = knob(
      'run',
      '--source',
      'default',
      '--limit',
      '1500',
      '--record-features',
      '--out',
      withFeatures,
      ...schedule,
    );
    expect(run.code, run.stderr).toBe(0);
    const { trace } = await readTraceFile(join(withFeatures, 'trace.arrow'));
    expect(trace.features?.width).toBe(192);
    expect(trace.features?.values.length).toBe(1500 * 192);
    expect(trace.features!.values.every(Number.isFinite)).toBe(true);
    // the features are ReLU outputs: non-negative, and not all zero
    expect(trace.features!.values.every((v) => v >= 0)).toBe(true);
    expect(trace.features!.values.some((v) => v > 0)).toBe(true);

    const settings = join(dir, 'dac.json');
    const calibrate = knob(
      'calibrate',
      '--trace',
      join(withFeatures, 'trace.arrow'),
      '--method',
      'dac',
      '--out',
      settings,
      '--json',
    );
    expect(calibrate.code, calibrate.stderr).toBe(0);
    const comparison = JSON.parse(calibrate.stdout) as { methods: Array<{ method: string; top1Changed: number }> };
    expect(comparison.methods.map((m) => m.method)).toEqual(['dac']);
    expect(comparison.methods[0].top1Changed).toBe(0);
    const calibrator = JSON.parse(readFileSync(settings, 'utf8')).calibrator;
    expect(calibrator).toMatchObject({ method: 'dac', classCount: 10, bank: { width: 192 } });

    const all = knob('calibrate', '--trace', join(withFeatures, 'trace.arrow'), '--method', 'all', '--json');
    expect(all.code, all.stderr).toBe(0);
    expect((JSON.parse(all.stdout) as { methods: Array<{ method: string }> }).methods.map((m) => m.method)).toEqual(
      expect.arrayContaining(['dac', 'procal']),
    );

    const replayed = knob(
      'replay',
      join(withFeatures, 'trace.arrow'),
      '--settings',
      settings,
      '--out',
      join(dir, 'replayed'),
    );
    expect(replayed.code, replayed.stderr).toBe(0);
    const metrics = JSON.parse(readFileSync(join(dir, 'replayed', 'metrics.json'), 'utf8'));
    expect(metrics.calibrator.method).toBe('dac');

    const without = join(dir, 'without');
    expect(knob('run', '--source', 'default', '--limit', '300', '--out', without, ...schedule).code).toBe(0);
    const refused = knob('replay', join(without, 'trace.arrow'), '--settings', settings, '--out', join(dir, 'refused'));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/needs the model's features for every frame: record with --record-features/);
    const skipped = knob('calibrate', '--trace', join(without, 'trace.arrow'), '--method', 'all');
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stdout).toMatch(/not fitted: dac, procal, conditional \(they need the model's features/);

    // The desk: a loaded trace with features feeds DAC and ProCal (fit, compare, apply, scrub); a
    // trace without them, or the live stream, cannot, and the calibrator is switched off for it.
    backend = new KnobBackend();
    const model = await backend.handle('model.load', { path: 'default' });
    expect(model.featureCount).toBe(192);
    await expect(backend.handle('calibrator.set', { calibrator })).rejects.toThrow(
      /which this recording does not keep/,
    );
    const loaded = await backend.handle('trace.load', { path: join(withFeatures, 'trace.arrow') });
    expect(loaded.frameCount).toBe(1500);
    expect(backend.session.describe().recording?.featureWidth).toBe(192);
    const comparison2 = await backend.handle('calibrator.compare', {
      methods: ['temperature', 'dac', 'procal'],
      split: { kind: 'time', evaluateFraction: 0.3 },
    });
    expect(comparison2.methods.map((m) => m.method)).toEqual(['temperature', 'dac', 'procal']);
    const before = await backend.handle('metrics.snapshot', {});
    await backend.handle('calibrator.set', { calibrator: comparison2.methods[1].spec });
    const after = await backend.handle('metrics.snapshot', {});
    expect(after.calibrator).toMatch(/^density-aware calibration/);
    const nll = (s: typeof after) => s.values.find((v) => v.name === 'NLL')!.value;
    expect(nll(after)).not.toBe(nll(before));
    const frame = await backend.handle('trace.frame', { frame: 1200 });
    expect(frame.top.length).toBeGreaterThan(0);
    await backend.handle('trace.load', { path: join(without, 'trace.arrow'), discard: true });
    expect(backend.session.describe().recording?.featureWidth).toBeNull();
    expect((await backend.handle('metrics.snapshot', {})).calibrator).toBeNull();

    // Live, opted in: the desk's recording keeps the features, DAC fits and applies while it grows.
    await backend.handle('source.open', {
      kind: 'embedded',
      recordFeatures: true,
      schedule: { kind: 'constant', corruption: 'gaussian_noise', severity: 3 },
      discard: true,
    });
    await backend.handle('stream.start', { speed: 16, discard: true });
    const deadline = performance.now() + 60_000;
    while ((backend.session.describe().recording?.frameCount ?? 0) < 300) {
      if (performance.now() > deadline) throw new Error('timed out recording');
      await new Promise((r) => setTimeout(r, 10));
    }
    await backend.handle('stream.stop', {});
    const live = backend.session.describe().recording!;
    expect(live.origin).toBe('live');
    expect(live.featureWidth).toBe(192);
    const liveComparison = await backend.handle('calibrator.compare', {
      methods: ['dac'],
      split: { kind: 'time', evaluateFraction: 0.3 },
    });
    await backend.handle('calibrator.set', { calibrator: liveComparison.methods[0].spec });
    await backend.handle('stream.start', { speed: 16 });
    await new Promise((r) => setTimeout(r, 500));
    await backend.handle('stream.stop', {});
    const grown = await backend.handle('metrics.snapshot', {});
    expect(grown.calibrator).toMatch(/^density-aware calibration/);
    expect(grown.frameCount).toBeGreaterThan(live.frameCount);
    // a source opened without recordFeatures makes the next live recording switch it off
    await backend.handle('source.open', { kind: 'embedded', discard: true });
    await backend.handle('stream.start', { speed: 16, discard: true });
    await backend.handle('stream.stop', {});
    expect((await backend.handle('metrics.snapshot', {})).calibrator).toBeNull();
  }, 240_000);
});
