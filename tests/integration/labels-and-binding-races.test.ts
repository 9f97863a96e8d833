/**
 * The session's label import and model binding under change (issue 27 review), on the real
 * backend: a recording replaced while its label file is read is not given that file's labels,
 * and a calibrator kept across a model switch to another class count is dropped, and says so.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { refusalOf } from '../support/refusals';
import { classMeanWeights, linearClassifier } from '../support/onnx-builder';
import { fashionMnistSample } from '../support/fashion-mnist';

/** readLabelFile held at a gate the test opens, so the race is not left to timing. */
const gate = vi.hoisted(() => {
  let open: () => void = () => {};
  let entered: () => void = () => {};
  return {
    reset() {
      const opened = new Promise<void>((resolve) => (open = resolve));
      const reached = new Promise<void>((resolve) => (entered = resolve));
      return { opened, reached, open: () => open(), enter: () => entered() };
    },
    current: null as null | { opened: Promise<void>; reached: Promise<void>; open: () => void; enter: () => void },
  };
});
vi.mock('../../src-main/core/recording/label-import', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src-main/core/recording/label-import')>();
  return {
    ...actual,
    readLabelFile: async (...args: Parameters<typeof actual.readLabelFile>) => {
      const read = await actual.readLabelFile(...args);
      if (gate.current !== null) {
        gate.current.enter();
        await gate.current.opened;
      }
      return read;
    },
  };
});

let backend: KnobBackend;
const dir = mkdtempSync(join(tmpdir(), 'knob-label-races-'));

const refusal = refusalOf;

beforeAll(async () => {
  backend = new KnobBackend();
  await backend.handle('model.load', { path: 'default' });
}, 120_000);
afterAll(async () => {
  await backend?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('labels.import while the recording changes', () => {
  it('a recording that replaced the one the file was read for gets none of its labels', async () => {
    // an unlabelled folder of 12 images: the import has frames to fill
    const images = join(dir, 'unlabelled');
    mkdirSync(images);
    const sample = fashionMnistSample(12);
    sample.images.forEach((image, i) => {
      const png = new PNG({ width: 28, height: 28, colorType: 0, inputColorType: 0, inputHasAlpha: false });
      png.data = Buffer.from(image);
      writeFileSync(
        join(images, `${String(i).padStart(2, '0')}.png`),
        PNG.sync.write(png, { colorType: 0, inputColorType: 0, inputHasAlpha: false }),
      );
    });
    await backend.handle('source.open', { kind: 'folder', path: images, discard: true });
    await backend.handle('stream.runOffline', { maxFrames: 12, discard: true });
    const labels = join(dir, 'labels.csv');
    writeFileSync(labels, 'frame,label\n' + Array.from({ length: 12 }, (_, i) => `${i},Trouser`).join('\n') + '\n');

    gate.current = gate.reset();
    const importing = backend.handle('labels.import', { path: labels });
    const refused = refusal(importing);
    await gate.current.reached;
    // meanwhile: another run replaces the recording (12 frames again, so the frames would fit)
    await backend.handle('stream.runOffline', { maxFrames: 12, discard: true });
    gate.current.open();
    const error = await refused;
    gate.current = null;
    expect(error.code).toBe('NOT_AVAILABLE');
    expect(error.message).toMatch(/labels\.csv: the recording changed while the label file was read/);
    expect((await backend.handle('session.get', {})).recording?.labels.imported).toBe(0);
    // with nothing in the way, the same file imports
    const imported = await backend.handle('labels.import', { path: labels });
    expect(imported.framesLabelled).toBe(12);
  }, 120_000);
});

describe("model.load's calibrator choice", () => {
  it("'keep' of a calibrator for another class count still drops it, and says so", async () => {
    const sample = fashionMnistSample(100);
    const fiveClass = join(dir, 'five-class.onnx');
    const picked = sample.labels.map((l, i) => [l, i] as const).filter(([l]) => l < 5);
    writeFileSync(
      fiveClass,
      linearClassifier(
        classMeanWeights(
          picked.map(([, i]) => sample.images[i]!),
          picked.map(([l]) => l),
          5,
          8,
        ),
      ),
    );
    await backend.handle('model.load', { path: 'default', discard: true });
    const k = 10;
    await backend.handle('calibrator.set', {
      calibrator: { method: 'vector', weights: Array(k).fill(1.1), bias: Array(k).fill(0) },
    });
    await backend.handle('model.load', { path: fiveClass, discard: true, calibrator: 'keep' });
    expect((await backend.handle('knobs.get', {})).calibrator).toBeNull();
    const state = await backend.handle('session.get', {});
    expect(state.error?.message).toMatch(
      /output calibrator \(.*\) is for 10 classes and .*five-class\.onnx has 5: it was dropped, although keeping it was asked/,
    );
  }, 120_000);
});
