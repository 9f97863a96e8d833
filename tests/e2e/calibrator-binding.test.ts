/**
 * A calibrator across a model switch in the real desk (Chromium, browser mode; issue 27): loading
 * another model while a calibrator fitted on the current one is applied asks, keep or drop, and
 * nothing is applied silently; a kept one is marked as another model's.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserMode } from '../support/browser-mode';
import { answerConfirmation, startDesk, testIdText } from '../support/desk-page';
import { fashionMnistSample } from '../support/fashion-mnist';
import { classMeanWeights, linearClassifier } from '../support/onnx-builder';

let app: BrowserMode;
const dir = mkdtempSync(join(tmpdir(), 'knob-calibrator-binding-'));
const other = join(dir, 'other.onnx');

beforeAll(async () => {
  const sample = fashionMnistSample(300);
  writeFileSync(other, linearClassifier(classMeanWeights(sample.images, sample.labels, 10, 4)));
  app = await startDesk();
}, 120_000);
afterAll(async () => app?.close());

async function loadFromPanel(path: string): Promise<void> {
  await app.page.getByTestId('model-path').fill(path);
  await app.page.getByTestId('load-model').click();
}

describe('a calibrator across a model switch in the desk', () => {
  it('asks keep or drop; drop switches it off, keep marks it as fitted on another model', async () => {
    await app.backend.handle('calibrator.set', { calibrator: { method: 'temperature', temperature: 1.116 } });
    await expect.poll(() => testIdText(app, 'calibrator-status')).toMatch(/T = 1\.116/);

    await loadFromPanel(other);
    const asked = await answerConfirmation(app, 'cancel'); // "Drop it"
    expect(asked).toMatch(/Keep the output calibrator\?/);
    expect(asked).toMatch(/fitted on another model .* not .*other\.onnx/);
    await expect.poll(() => testIdText(app, 'model-name'), { timeout: 20000 }).toBe('other.onnx');
    await expect.poll(() => testIdText(app, 'calibrator-status')).toMatch(/No calibrator/);
    expect((await app.backend.handle('knobs.get', {})).calibrator).toBeNull();

    await app.backend.handle('calibrator.set', { calibrator: { method: 'temperature', temperature: 1.116 } });
    await loadFromPanel('default');
    await answerConfirmation(app, 'accept'); // "Keep it"
    await expect.poll(() => testIdText(app, 'model-name'), { timeout: 20000 }).toBe('knob-fmnist.onnx');
    await expect.poll(() => testIdText(app, 'calibrator-other-model')).toMatch(/fitted on another model/);
    expect(app.pageErrors).toEqual([]);
  }, 180_000);
});
