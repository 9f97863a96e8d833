/**
 * Calibrators, settings and recordings bound to their model (issue 27), on the real backend and
 * the real CLI: a calibrator fitted on one model is never applied to another silently (the load
 * asks: keep or drop); the CLI refuses a settings file tuned with another model unless told; the
 * desk's export refuses another model's trace with the CLI's message, and both write the same
 * bundle for the same trace and settings: they share one use case (use-cases/export-bundle.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { readVerifiedBundle } from '../../src-main/core/bundle/bundle-verify';
import { sha256Hex } from '../../src-main/core/files/sha256';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { settingsFile } from '../../src-main/core/recording/settings-file';
import type { BundleManifest } from '../../src-shared/bundle/bundle-manifest';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { classMeanWeights, linearClassifier } from '../support/onnx-builder';
import { fashionMnistSample } from '../support/fashion-mnist';
import { knob, knobFailureLine } from '../support/knob-cli';
import { refusalOf } from '../support/refusals';

let backend: KnobBackend;
const dir = mkdtempSync(join(tmpdir(), 'knob-model-binding-'));
const other = join(dir, 'other.onnx');
const defaultSha = sha256Hex(readFileSync(DEFAULT_MODEL_PATH));
const trace = join(dir, 'default.arrow');
const gate = { zeta: 0.55, wnRadPerSec: 9, variant: 'second-order' as const, mode: 'continuous' as const };
const calibrator = { method: 'temperature' as const, temperature: 1.4 };

beforeAll(async () => {
  const sample = fashionMnistSample(200);
  writeFileSync(other, linearClassifier(classMeanWeights(sample.images, sample.labels, 10, 8)));
  backend = new KnobBackend();
  await backend.handle('model.load', { path: 'default' });
  await backend.handle('source.open', { kind: 'embedded', discard: true });
  await backend.handle('stream.runOffline', { maxFrames: 80, discard: true });
  await backend.handle('trace.save', { path: trace });
}, 120_000);
afterAll(async () => backend?.close());

describe('a calibrator across a model switch (desk)', () => {
  it('is bound to the model it was fitted on; another model asks, and keep or drop is the choice', async () => {
    const knobs = await backend.handle('calibrator.set', { calibrator: { method: 'temperature', temperature: 1.3 } });
    expect(knobs.calibratorModel).toEqual([defaultSha]);

    const asked = await refusalOf(backend.handle('model.load', { path: other, discard: true }));
    expect(asked.code).toBe('CALIBRATOR_OF_ANOTHER_MODEL');
    expect(asked.message).toMatch(/fitted on another model \(SHA-256 [0-9a-f]{12}\.\.\.\), not .*other\.onnx/);
    // nothing changed: the old model and its calibrator
    expect((await backend.handle('model.info', {}))!.sha256).toEqual([defaultSha]);
    expect((await backend.handle('knobs.get', {})).calibrator).toEqual({ method: 'temperature', temperature: 1.3 });

    await backend.handle('model.load', { path: other, discard: true, calibrator: 'drop' });
    expect((await backend.handle('knobs.get', {})).calibrator).toBeNull();

    await backend.handle('model.load', { path: 'default', discard: true });
    await backend.handle('calibrator.set', { calibrator: { method: 'temperature', temperature: 1.3 } });
    await backend.handle('model.load', { path: other, discard: true, calibrator: 'keep' });
    const kept = await backend.handle('knobs.get', {});
    expect(kept.calibrator).toEqual({ method: 'temperature', temperature: 1.3 });
    expect(kept.calibratorModel).toEqual([defaultSha]); // still says whose it is
    // back to the model it belongs to: no question
    await backend.handle('model.load', { path: 'default', discard: true });
    expect((await backend.handle('knobs.get', {})).calibrator).not.toBeNull();
    await backend.handle('calibrator.set', { calibrator: null });
  }, 120_000);

  it("the desk's export refuses a trace recorded with another model, with the CLI's rule and message", async () => {
    await backend.handle('model.load', { path: other, discard: true });
    await backend.handle('trace.load', { path: trace, discard: true });
    const desk = await refusalOf(backend.handle('bundle.export', { path: join(dir, 'crossed.knob.zip') }));
    expect(desk.code).toBe('INVALID_INPUT');
    const rule = /recorded with another model \(.*knob-fmnist\.onnx, SHA-256 [0-9a-f]{12}\.\.\.\), not .*other\.onnx/;
    expect(desk.message).toMatch(rule);
    const cli = await knob('export', '--trace', trace, '--model', other, '--out', join(dir, 'crossed-cli.knob.zip'));
    const line = knobFailureLine(cli);
    expect(line).toMatch(rule);
    expect(line).toBe(`knob: ${desk.message}`);
  }, 120_000);
});

describe('a settings file tuned with another model (CLI)', () => {
  it('is refused unless --allow-other-model; calibrate writes the model it was fitted on', async () => {
    const settings = join(dir, 'tuned-on-default.json');
    const file = settingsFile({
      gate: { ...DEFAULT_GATE_SETTINGS, zeta: 0.5 },
      model: DEFAULT_MODEL_PATH,
      modelSha256: [defaultSha],
      calibrator: { method: 'temperature', temperature: 1.2 },
    });
    writeFileSync(settings, file.data);
    const args = ['run', '--model', other, '--source', 'default', '--limit', '40', '--settings', settings];
    const refused = await knob(...args, '--out', join(dir, 'refused'));
    expect(knobFailureLine(refused)).toMatch(
      /tuned-on-default\.json: tuned with another model \(SHA-256 [0-9a-f]{12}\.\.\.\), not .*other\.onnx.*--allow-other-model/,
    );
    const allowed = await knob(...args, '--allow-other-model', '--out', join(dir, 'allowed'), '--json');
    expect(allowed.status, allowed.stderr).toBe(0);
    const same = await knob(
      'run',
      '--model',
      'default',
      '--source',
      'default',
      '--limit',
      '40',
      '--settings',
      settings,
      '--out',
      join(dir, 'same'),
      '--json',
    );
    expect(same.status, same.stderr).toBe(0);

    const fitted = join(dir, 'fitted.json');
    const calibrated = await knob('calibrate', '--trace', trace, '--method', 'temperature', '--out', fitted, '--json');
    expect(calibrated.status, calibrated.stderr).toBe(0);
    expect(JSON.parse(readFileSync(fitted, 'utf8'))).toMatchObject({ modelSha256: [defaultSha] });
    // a trace-based command checks the settings against the trace's model
    const replayed = await knob('replay', trace, '--settings', settings, '--out', join(dir, 'replayed'));
    expect(replayed.status, replayed.stderr).toBe(0);
  }, 240_000);
});

async function manifestOf(path: string): Promise<BundleManifest> {
  return (await readVerifiedBundle(readFileSync(path), path)).manifest;
}

describe('one export for the desk and the CLI (src-main/core/use-cases/export-bundle.ts)', () => {
  it('writes the same bundle for the same trace and settings (with SOURCE_DATE_EPOCH, the same time stamp too)', async () => {
    // the time stamp every output records (creation-time.ts): fixed, so nothing else can differ
    const before = process.env.SOURCE_DATE_EPOCH;
    process.env.SOURCE_DATE_EPOCH = '1767225600';
    // the files of a worker share this process's environment (vitest's isolate: false)
    onTestFinished(() => {
      if (before === undefined) delete process.env.SOURCE_DATE_EPOCH;
      else process.env.SOURCE_DATE_EPOCH = before;
    });
    await backend.handle('model.load', { path: 'default', discard: true });
    await backend.handle('trace.load', { path: trace, discard: true });
    const knobs = await backend.handle('knobs.set', { gate });
    await backend.handle('calibrator.set', { calibrator });
    // the same NAME in two folders: NAME names the bundle and its Triton model
    mkdirSync(join(dir, 'desk'));
    mkdirSync(join(dir, 'cli'));
    const deskPath = join(dir, 'desk', 'tuned.knob.zip');
    await backend.handle('bundle.export', { path: deskPath, includeModel: true });

    // the same settings as a settings file, as the desk exports them
    const settingsPath = join(dir, 'knob-settings.json');
    const model = (await backend.handle('model.info', {}))!;
    const file = settingsFile({ gate: knobs.gate, model: model.paths[0]!, modelSha256: model.sha256, calibrator });
    writeFileSync(settingsPath, file.data);
    const cliPath = join(dir, 'cli', 'tuned.knob.zip');
    const args = ['--trace', trace, '--model', 'default', '--settings', settingsPath, '--out', cliPath];
    const cli = await knob('export', ...args);
    expect(cli.status, cli.stderr).toBe(0);

    const [desk, line] = await Promise.all([manifestOf(deskPath), manifestOf(cliPath)]);
    expect(line).toEqual(desk);
    expect(desk.createdAt).toBe('2026-01-01T00:00:00.000Z');
    expect(readFileSync(cliPath).equals(readFileSync(deskPath))).toBe(true);
    expect(desk.gate).toEqual(knobs.gate);
    expect(desk.calibrator).toEqual(calibrator);
  }, 180_000);
});
