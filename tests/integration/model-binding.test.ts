/**
 * Calibrators, settings and recordings bound to their model (issue 27), on the real backend and
 * the real CLI: a calibrator fitted on one model is never applied to another silently (the load
 * asks: keep or drop); the CLI refuses a settings file tuned with another model unless told; the
 * desk's export refuses another model's trace with the CLI's rule and message.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { sha256Hex } from '../../src-main/core/files/sha256';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { settingsFile } from '../../src-main/core/recording/settings-file';
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
    expect(line.slice(line.indexOf('recorded with'))).toBe(desk.message.slice(desk.message.indexOf('recorded with')));
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
