/**
 * Importing a bundle into a session whose loaded model is not the bundle's (issue 15): the import
 * says so; bundle.loadModel loads the model the bundle names, from the bundle itself or from a file
 * the user located, which is refused unless its SHA-256 is the bundle's; a bundle without its model
 * says to locate it by name and hash.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readVerifiedBundle } from '../../src-main/core/bundle/bundle-verify';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import type { CallContext } from '../../src-main/core/calls/call-context';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { classMeanWeights, linearClassifier } from '../support/onnx-builder';
import { fashionMnistSample } from '../support/fashion-mnist';

let backend: KnobBackend;
const dir = mkdtempSync(join(tmpdir(), 'knob-bundle-import-'));
const full = join(dir, 'full.knob.zip');
const slim = join(dir, 'slim.knob.zip');
const other = join(dir, 'other.onnx');

beforeAll(async () => {
  backend = new KnobBackend();
  await backend.handle('model.load', { path: 'default' });
  await backend.handle('source.open', { kind: 'embedded', discard: true });
  await backend.handle('stream.runOffline', { maxFrames: 64, discard: true });
  await backend.handle('trace.save', { path: join(dir, 'recorded.arrow') });
  await backend.handle('knobs.set', { gate: { zeta: 0.4, wnRadPerSec: 11 } });
  await backend.handle('bundle.export', { path: full });
  await backend.handle('bundle.export', { path: slim, includeModel: false });
  // another model is loaded before the import: a real classifier of the same ten classes
  const sample = fashionMnistSample(200);
  writeFileSync(other, linearClassifier(classMeanWeights(sample.images, sample.labels, 10, 8)));
  await backend.handle('model.load', { path: other, discard: true });
}, 120_000);
afterAll(async () => backend?.close());

describe('a bundle whose model is not the one loaded', () => {
  it('the import says so and restores the knobs; loadModel loads the bundle own model', async () => {
    const imported = await backend.handle('bundle.import', { path: full });
    expect(imported.model).toMatchObject({ fileName: 'knob-fmnist.onnx', matchesLoaded: false, inBundle: true });
    expect(imported.verification).toMatch(
      /tuned with knob-fmnist\.onnx \(SHA-256 [0-9a-f]{12}\.\.\.\), not the loaded model; the bundle holds it/,
    );
    expect(imported.knobs.gate.zeta).toBe(0.4);
    const loaded = await backend.handle('bundle.loadModel', { path: full, discard: true });
    const { manifest } = await readVerifiedBundle(readFileSync(full), full);
    expect(loaded.sha256).toEqual([manifest.model.files[0]!.sha256]);
    expect(loaded.contract).toBe(manifest.model.contract);
    expect((await backend.handle('bundle.import', { path: full })).model?.matchesLoaded).toBe(true);
  }, 60_000);

  it('without its model in the bundle: refused until the right file is located', async () => {
    await backend.handle('model.load', { path: other, discard: true });
    const imported = await backend.handle('bundle.import', { path: slim });
    expect(imported.model).toMatchObject({ matchesLoaded: false, inBundle: false });
    await expect(backend.handle('bundle.loadModel', { path: slim, discard: true })).rejects.toThrow(
      /slim\.knob\.zip: the model is not in the bundle; locate knob-fmnist\.onnx \(SHA-256 [0-9a-f]{12}\.\.\.\)/,
    );
    await expect(backend.handle('bundle.loadModel', { path: slim, modelPath: other, discard: true })).rejects.toThrow(
      /other\.onnx: not the model the bundle was tuned with/,
    );
    const located = await backend.handle('bundle.loadModel', {
      path: slim,
      modelPath: DEFAULT_MODEL_PATH,
      discard: true,
    });
    expect(located.paths).toEqual([DEFAULT_MODEL_PATH]);
  }, 60_000);
});

describe('an export and an import as long work (issue 32)', () => {
  /** A call whose steps are recorded, cancelled when the step named `stopAt` is reported. */
  const steppedCall = (stopAt?: RegExp) => {
    const controller = new AbortController();
    const steps: Array<[string, number, number | null]> = [];
    const call: CallContext = {
      signal: controller.signal,
      progress: (task, done, total) => {
        steps.push([task, done, total]);
        if (stopAt?.test(task)) controller.abort();
      },
    };
    return { call, steps };
  };

  it('reports each step, and a cancel between steps writes nothing and changes no knob', async () => {
    await backend.handle('model.load', { path: 'default', discard: true });
    await backend.handle('trace.load', { path: join(dir, 'recorded.arrow'), discard: true });
    const out = join(dir, 'stepped.knob.zip');
    const whole = steppedCall();
    await backend.call('bundle.export', { path: out }, whole.call);
    expect(whole.steps.map(([task]) => task)).toEqual([
      'reading knob-fmnist.onnx',
      'checking the model files',
      'the report of the recording (64 frames)',
      'the step graph and its Triton repository',
      expect.stringMatching(/^archiving \d+ members$/),
      'writing stepped.knob.zip',
    ]);
    expect(whole.steps.map(([, done, total]) => `${done}/${total}`)).toEqual([
      '0/6',
      '1/6',
      '2/6',
      '3/6',
      '4/6',
      '5/6',
    ]);

    const cancelled = join(dir, 'cancelled.knob.zip');
    const stopped = steppedCall(/^the step graph/);
    await expect(backend.call('bundle.export', { path: cancelled }, stopped.call)).rejects.toMatchObject({
      code: 'CANCELLED',
      message: 'the export of cancelled.knob.zip was cancelled',
    });
    expect(existsSync(cancelled)).toBe(false);

    const before = await backend.handle('knobs.get', {});
    const importing = steppedCall(/^verifying/);
    await expect(backend.call('bundle.import', { path: out }, importing.call)).rejects.toMatchObject({
      code: 'CANCELLED',
    });
    expect(importing.steps.map(([task]) => task)).toEqual([
      'reading stepped.knob.zip',
      'verifying stepped.knob.zip (format, members, hashes)',
    ]);
    expect(await backend.handle('knobs.get', {})).toEqual(before);
  }, 60_000);
});
