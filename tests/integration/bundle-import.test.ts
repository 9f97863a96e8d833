/**
 * Importing a bundle into a session whose loaded model is not the bundle's (issue 15): the import
 * says so; bundle.loadModel loads the model the bundle names, from the bundle itself or from a file
 * the user located, which is refused unless its SHA-256 is the bundle's; a bundle without its model
 * says to locate it by name and hash.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readVerifiedBundle } from '../../src-main/core/bundle/bundle-verify';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
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
