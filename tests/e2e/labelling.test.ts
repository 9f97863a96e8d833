/**
 * A labelling session in the real desk (Chromium, browser mode; issue 27): labels imported for a
 * video from a CSV, three frames corrected in labelling mode, one undone, and the calibration
 * metrics follow each step; the ground truth is kept (the metrics can read it alone again).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FASHION_MNIST_LABELS } from '../../src-main/core/datasets/embedded-dataset';
import type { BrowserMode } from '../support/browser-mode';
import { openSourceAndWait, startDesk, testIdText } from '../support/desk-page';
import { fashionVideo } from '../support/fashion-video';

let app: BrowserMode;
const FRAMES = 40;

beforeAll(async () => {
  app = await startDesk();
}, 120_000);
afterAll(async () => app?.close());

/** The accuracy the backend computes now, and the one the desk's headline shows. */
async function accuracyNow(): Promise<{ backend: number; shown: string }> {
  const snapshot = await app.backend.handle('metrics.snapshot', { detail: 'light' });
  const value = snapshot.values.find((v) => v.name === 'accuracy')!.value!;
  const shown = await app.page.locator('.headline dd[data-identity^="accuracy"]').first().innerText();
  return { backend: value, shown };
}

async function expectAccuracy(correct: number): Promise<void> {
  await expect.poll(async () => (await accuracyNow()).backend, { timeout: 20000 }).toBeCloseTo(correct / FRAMES, 12);
  // the desk recomputes by itself (paused) and shows the same figure
  await expect.poll(async () => (await accuracyNow()).shown, { timeout: 20000 }).toBe((correct / FRAMES).toFixed(4));
}

describe('a labelling session in the desk', () => {
  it('imports labels for a video, corrects three frames, undoes one; the metrics follow each step', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'knob-labelling-'));
    const video = fashionVideo(dir, FRAMES, 10);
    const csv = join(dir, 'labels.csv');
    writeFileSync(csv, `frame,label\n${video.labels.map((l, i) => `${i},${FASHION_MNIST_LABELS[l]}`).join('\n')}\n`);

    await app.page.getByTestId('source-kind').selectOption('video');
    await app.page.getByTestId('source-path').fill(video.path);
    await app.page.getByTestId('schedule-kind').selectOption('none');
    await openSourceAndWait(app);
    await app.page.getByTestId('run-offline').click();
    await expect.poll(async () => Number(await testIdText(app, 'frames-processed')), { timeout: 30000 }).toBe(FRAMES);
    await expect.poll(() => app.page.getByText('No labelled frames yet').isVisible(), { timeout: 20000 }).toBe(true);

    await app.page.getByTestId('label-file').fill(csv);
    await app.page.getByTestId('label-import').click();
    await expect
      .poll(() => testIdText(app, 'feedback'))
      .toMatch(/40 frames labelled from labels\.csv \(40 rows by frame\)/);
    await expect.poll(() => testIdText(app, 'metrics-facts'), { timeout: 20000 }).toMatch(/40 labelled of 40 frames/);

    // frames the model gets right, to be corrected to a wrong class one by one
    const right: number[] = [];
    for (let f = 0; f < FRAMES && right.length < 3; f++) {
      const frame = await app.backend.handle('trace.frame', { frame: f });
      if (frame.top[0]!.classIndex === video.labels[f]) right.push(f);
    }
    expect(right).toHaveLength(3);
    let correct = 0;
    for (let f = 0; f < FRAMES; f++)
      if ((await app.backend.handle('trace.frame', { frame: f })).top[0]!.classIndex === video.labels[f]) correct++;
    await expectAccuracy(correct);

    await app.page.getByTestId('labelling-mode').click();
    await expect.poll(() => app.page.getByTestId('labelling-banner').isVisible()).toBe(true);
    for (const [step, frame] of right.entries()) {
      await app.page.getByTestId('scrub').fill(String(frame));
      await expect.poll(() => testIdText(app, 'live-frame-index')).toBe(String(frame));
      await app.page.locator('body').click({ position: { x: 5, y: 890 } });
      const wrong = (video.labels[frame]! + 1) % 10;
      await app.page.keyboard.press(String(wrong));
      await expect.poll(() => testIdText(app, 'feedback')).toMatch(new RegExp(`frame ${frame} corrected`));
      await expectAccuracy(correct - (step + 1));
    }
    await app.page.getByTestId('label-undo').click();
    await expect.poll(() => testIdText(app, 'feedback')).toMatch(new RegExp(`frame ${right[2]} undone`));
    await expectAccuracy(correct - 2);
    await app.screenshot('desk-labelling');

    // the truth is kept beside the corrections: the metrics can read it alone
    const labels = (await app.backend.handle('session.get', {})).recording!.labels;
    expect(labels).toMatchObject({ fromSource: 0, imported: FRAMES, corrections: 2, canUndo: true, canRedo: true });
    await app.page.getByTestId('use-corrections').uncheck();
    await expectAccuracy(correct);
    expect(app.pageErrors).toEqual([]);
  }, 240_000);
});
