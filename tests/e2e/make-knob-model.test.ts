/**
 * "Make a Knob model" in the real desk (Chromium, browser mode; issue 31, the end-to-end
 * must-show): a foreign classifier (a CNN exported by PyTorch, one `logits` output) is loaded from
 * the Model panel; "Make a Knob model" over an ImageFolder of 5,000 real images (class folders named
 * as the model's labels, in an order that is not the model's) shows its progress on the work bar
 * (and its Cancel there writes nothing), then the card of held-out figures; Load puts the new model in (Knob-native, with features), and
 * under a corruption step the gate it drives falls where the corruption starts. `knob fit-heads
 * --data` on the same images makes the same model, byte for byte.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HeadsCard } from '../../src-shared/heads/heads-card';
import type { BrowserMode } from '../support/browser-mode';
import { openSourceAndWait, recordFrames, startDesk, testIdText, waitUntil } from '../support/desk-page';
import { fashionMnistSample } from '../support/fashion-mnist';
import { knob } from '../support/knob-cli';

const FOREIGN = resolve('tests/fixtures/models/foreign-cnn.onnx');
/** Folder names for the model's labels 1..9 ("T-shirt/top" cannot name a folder). */
const FOLDERS = ['Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle_boot'];
const IMAGES = 5000;
const dir = mkdtempSync(join(tmpdir(), 'knob-make-desk-'));
const images = join(dir, 'images');
const out = join(dir, 'foreign-knob.onnx');
let app: BrowserMode;

function writeImageFolder(): void {
  const sample = fashionMnistSample(6000);
  let written = 0;
  for (let i = 0; i < sample.labels.length && written < IMAGES; i++) {
    const label = sample.labels[i]!;
    if (label === 0) continue;
    const folder = join(images, FOLDERS[label - 1]!);
    mkdirSync(folder, { recursive: true });
    const png = new PNG({ width: 28, height: 28, colorType: 0, inputColorType: 0, inputHasAlpha: false });
    png.data = Buffer.from(sample.images[i]!);
    writeFileSync(
      join(folder, `${i}.png`),
      PNG.sync.write(png, { colorType: 0, inputColorType: 0, inputHasAlpha: false }),
    );
    written++;
  }
}

beforeAll(async () => {
  writeImageFolder();
  app = await startDesk();
}, 120_000);
afterAll(async () => app?.close());

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

describe('making a Knob model from the Model panel', () => {
  it('fits the heads over an image folder with progress and a card, loads the model, and its gate answers a corruption step', async () => {
    const { page } = app;
    await page.getByTestId('model-path').fill(FOREIGN);
    await page.getByTestId('load-model').click();
    await waitUntil('the foreign model', async () => (await testIdText(app, 'model-name')) === 'foreign-cnn.onnx');

    await page.getByTestId('make-knob-model').locator('summary').click();
    await page.getByTestId('make-data').fill(images);
    await page.getByTestId('make-out').fill(out);
    // Cancel on the work bar stops it, and nothing is written
    await page.getByTestId('make-start').click();
    await waitUntil('the work bar', () => page.getByTestId('work-progress').isVisible());
    await page.getByTestId('cancel-work').click();
    await waitUntil('the cancel', () => page.getByTestId('make-cancelled').isVisible());
    expect(await testIdText(app, 'make-cancelled')).toMatch(/cancelled: nothing was written/);
    expect(existsSync(out)).toBe(false);

    await page.getByTestId('make-start').click();
    // progress: the work bar names the work, then its stages (the recording's frames, the heads)
    const tasks = new Set<string>();
    await waitUntil(
      'the card',
      async () => {
        if (await page.getByTestId('work-progress').isVisible()) tasks.add(await testIdText(app, 'work-task'));
        return page.getByTestId('make-card').isVisible();
      },
      120_000,
    );
    expect([...tasks].join('\n')).toMatch(/making foreign-knob\.onnx from images|offline run of|fitting the/);
    expect(await testIdText(app, 'make-card')).toMatch(
      /Wrote .*foreign-knob\.onnx: fitted in [\d.]+ s on \d+ labelled frames \(64 features, recorded now\)/,
    );
    const card = JSON.parse(readFileSync(join(dir, 'foreign-knob.card.json'), 'utf8')) as HeadsCard;
    expect(card.trace.labelledFrames).toBe(IMAGES);
    // the card names the classifier by its own file's hash (not the copy with its features exposed)
    expect(card.model).toEqual({
      path: FOREIGN,
      sha256: createHash('sha256').update(readFileSync(FOREIGN)).digest('hex'),
    });
    expect(existsSync(join(dir, 'foreign-knob.card.md'))).toBe(true);
    // the table shows the card's figures, the heads' and the model's as recorded
    const table = page.getByTestId('make-card-table');
    expect(await table.locator('thead').innerText()).toMatch(/heads\s+recorded/);
    expect(await testIdText(app, 'make-knob-model')).toMatch(
      /recorded: the classifier as it recorded the images \(single-classifier\)/,
    );
    const auroc = table.locator('tr[data-figure="AUROC of u*"] td');
    expect(await auroc.nth(0).getAttribute('data-value')).toBe(String(card.validation.heads.aurocOracleAdvantage));
    expect(await auroc.nth(1).getAttribute('data-value')).toBe(String(card.validation.recorded.aurocOracleAdvantage));
    await app.screenshot('desk-make-knob-model');

    // one use case below the desk and the command line: the same images and seed make the same model
    const cli = join(dir, 'cli-knob.onnx');
    const made = await knob('fit-heads', '--model', FOREIGN, '--data', images, '--out', cli, '--json');
    expect(made.status, made.stderr).toBe(0);
    expect(Buffer.compare(readFileSync(cli), readFileSync(out))).toBe(0);

    await page.getByTestId('make-load').click();
    await waitUntil('the new model', async () => (await testIdText(app, 'model-name')) === 'foreign-knob.onnx');
    expect(await testIdText(app, 'model-contract')).toBe('knob-native');

    // a corruption step (gaussian noise at severity 5 from frame 150): the gate falls after it
    await page.getByTestId('schedule-kind').selectOption('step');
    await page.locator('label', { hasText: 'severity S' }).locator('input').fill('5');
    await openSourceAndWait(app);
    await page.getByTestId('speed').selectOption('4');
    await recordFrames(app, 400);
    const series = await app.backend.handle('recording.series', { maxPoints: 100_000 });
    const clean = series.g.filter((_, i) => series.severity[i] === 0 && i >= 50 && i < 150);
    const corrupted = series.g.filter((_, i) => series.severity[i] === 5 && i >= 250);
    expect(clean.length).toBeGreaterThan(50);
    expect(corrupted.length).toBeGreaterThan(50);
    expect(mean(clean) - mean(corrupted)).toBeGreaterThan(0.1);
    expect(app.pageErrors).toEqual([]);
  }, 240_000);
});
