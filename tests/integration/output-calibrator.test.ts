/**
 * The output calibrator in the session: fitted and compared on a recording (held out, in the
 * metrics worker), applied after fusion to every view (calibration, scrubbing, rolling figures,
 * export and report) with its label, switched off again, carried by the settings file, and refused
 * for a model with another number of classes.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readVerifiedBundle } from '../../src-main/core/bundle/bundle-verify';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';

let backend: KnobBackend;
const dir = mkdtempSync(join(tmpdir(), 'knob-calibrator-'));

beforeAll(async () => {
  backend = new KnobBackend();
  await backend.handle('model.load', { path: 'default' });
  await backend.handle('source.open', {
    kind: 'embedded',
    schedule: { kind: 'constant', corruption: 'gaussian_noise', severity: 2 },
  });
  await backend.handle('stream.start', { speed: 16 });
  const deadline = performance.now() + 30000;
  while ((backend.session.describe().recording?.frameCount ?? 0) < 400) {
    if (performance.now() > deadline) throw new Error('timed out recording');
    await new Promise((r) => setTimeout(r, 10));
  }
  await backend.handle('stream.stop', {});
});
afterAll(async () => backend?.close());

const ECE = 'ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)';
const valueOf = (snapshot: { values: Array<{ identity: string; value: number | null }> }, identity: string) =>
  snapshot.values.find((v) => v.identity === identity)!.value;

describe('the output calibrator in the session', () => {
  it('fits and compares calibrators held out, applies one to every view, and switches it off', async () => {
    const before = await backend.handle('metrics.snapshot', {});
    expect(before.calibrator).toBeNull();
    const comparison = await backend.handle('calibrator.compare', {
      methods: ['temperature', 'isotonic'],
      split: { kind: 'time', evaluateFraction: 0.3 },
    });
    expect(comparison.recordingId).toBe(before.recordingId);
    // the time split fits on the first round(0.7 n) labelled frames and evaluates the rest (a count
    // with n * 0.3 ending in .5, as 405 gives, rounds the other way than round(0.3 n))
    const n = before.labelledFrameCount;
    expect(comparison.evaluatedFrames).toBe(n - Math.round(n * 0.7));
    expect(comparison.methods.map((m) => m.method)).toEqual(['temperature', 'isotonic']);
    expect(comparison.methods[0].top1Changed).toBe(0);
    const temperature = comparison.methods[0].spec;
    expect(temperature.method).toBe('temperature');

    const frameBefore = await backend.handle('trace.frame', { frame: 100 });
    const knobs = await backend.handle('calibrator.set', { calibrator: temperature });
    expect(knobs.calibrator).toEqual(temperature);
    expect(knobs.version).toBe(before.settingsVersion + 1);
    const after = await backend.handle('metrics.snapshot', {});
    expect(after.calibrator).toMatch(/^temperature scaling, T = /);
    expect(after.settingsVersion).toBe(knobs.version);
    expect(valueOf(after, ECE)).not.toBe(valueOf(before, ECE));
    // Temperature scaling keeps the order: accuracy is unchanged, the probabilities are not.
    expect(valueOf(after, 'accuracy(top-1)')).toBe(valueOf(before, 'accuracy(top-1)'));
    const frameAfter = await backend.handle('trace.frame', { frame: 100 });
    expect(frameAfter.top[0].classIndex).toBe(frameBefore.top[0].classIndex);
    expect(frameAfter.top[0].fused).not.toBe(frameBefore.top[0].fused);

    // The bundle carries it: the manifest, metrics.json and the report's provenance row.
    const out = join(dir, 'tuned.knob.zip');
    await backend.handle('bundle.export', { path: out });
    const { manifest, members } = await readVerifiedBundle(readFileSync(out), out);
    expect(manifest.calibrator).toEqual(temperature);
    const member = (name: string) => new TextDecoder().decode(members.get(name)!);
    const metrics = JSON.parse(member('report/metrics.json')) as {
      calibrator: unknown;
      provenance: Record<string, string>;
    };
    expect(metrics.calibrator).toEqual(temperature);
    expect(metrics.provenance['output calibrator']).toMatch(/^temperature scaling, T = /);
    expect(member('report/report.html')).toMatch(/calibrated by temperature scaling/);

    // Off: every view is the fused output again, exactly.
    await backend.handle('calibrator.set', { calibrator: null });
    const off = await backend.handle('metrics.snapshot', {});
    expect(off.calibrator).toBeNull();
    expect(off.values.map((v) => v.value)).toEqual(before.values.map((v) => v.value));

    // Importing the bundle brings it back, every parameter identical, with a verification line
    // that says what was checked and that the model is the one loaded.
    const gateBefore = (await backend.handle('knobs.get', {})).gate;
    await backend.handle('knobs.set', { gate: { zeta: 1.7, wnRadPerSec: 2 } });
    const imported = await backend.handle('bundle.import', { path: out });
    expect(imported.knobs.calibrator).toEqual(temperature);
    expect(imported.knobs.gate).toEqual(gateBefore);
    expect(imported.verification).toMatch(
      /^bundle sound \(format 1\.0; .* hashes match\); same model as the one loaded; output calibrator: temperature scaling/,
    );
    expect(imported.model).toMatchObject({ fileName: 'knob-fmnist.onnx', matchesLoaded: true, inBundle: true });
    await backend.handle('calibrator.set', { calibrator: null });
  });

  it('a calibrator for another number of classes is refused and changes nothing', async () => {
    const version = (await backend.handle('knobs.get', {})).version;
    await expect(
      backend.handle('calibrator.set', {
        calibrator: {
          method: 'platt',
          perClass: [
            { a: 1, b: 0 },
            { a: 1, b: 0 },
          ],
        },
      }),
    ).rejects.toMatchObject({ code: 'INVALID_SETTINGS', message: 'the calibrator maps 2 classes; the model has 10' });
    expect((await backend.handle('knobs.get', {})).version).toBe(version);
  });
});
