/**
 * The operator's desk in Debian's Chromium through browser mode, with the real core: the default
 * model and stream load by themselves; a step schedule plays and the gate chart and live view move;
 * variant and mode switch; metrics recompute by replay; A/B, feedback, export/import, video,
 * offline runs, scrubbing and seeking (which keep the recording), a reload that finds the session
 * as it was, the question before a recording is discarded; and an accessibility audit (axe-core).
 * Each test starts its own desk on its own backend, so none depends on another.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BrowserMode } from '../support/browser-mode';
import {
  answerConfirmation,
  openSourceAndWait as openSource,
  recordFrames,
  startDesk,
  testIdText,
} from '../support/desk-page';
import { fashionMnistSample } from '../support/fashion-mnist';
import { testPatternVideo } from '../support/fashion-video';
import { classMeanWeights, linearClassifier } from '../support/onnx-builder';

let app: BrowserMode;
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

beforeEach(async () => {
  app = await startDesk();
});
afterEach(async () => app?.close());

const text = (id: string): Promise<string> => testIdText(app, id);
const openSourceAndWait = (answer?: 'accept' | 'cancel'): Promise<void> => openSource(app, answer);
/** A paused recording of the step schedule (severity 3 from frame 150 on). */
async function recordStep(frames: number): Promise<number> {
  await app.page.getByTestId('schedule-kind').selectOption('step');
  await openSourceAndWait();
  await app.page.getByTestId('speed').selectOption('4');
  return recordFrames(app, frames);
}
const chartPixels = (): Promise<string> =>
  app.page.locator('[data-testid="gate-chart"] canvas').evaluate((canvas: HTMLCanvasElement) => canvas.toDataURL());

describe('the desk in browser mode', () => {
  it('opens with the default model and the embedded stream, and says which provider runs', async () => {
    await expect.poll(() => text('model-name'), { timeout: 20000 }).toBe('knob-fmnist.onnx');
    expect(await text('model-contract')).toBe('knob-native');
    expect(await text('model-provider')).toBe('cpu');
    await expect
      .poll(() => text('source-name'), { timeout: 20000 })
      .toMatch(/embedded Fashion-MNIST test set \(10000 images\)/);
    expect(app.pageErrors).toEqual([]);
    await app.screenshot('desk-open');
  });

  it('plays a step schedule: frames reach the model, the live view and the gate chart move, the corruption shows', async () => {
    await app.page.getByTestId('schedule-kind').selectOption('step');
    await openSourceAndWait();
    const before = await chartPixels();
    await app.page.getByTestId('speed').selectOption('4');
    await app.page.getByTestId('play').click();
    await expect.poll(async () => Number(await text('frames-processed')), { timeout: 20000 }).toBeGreaterThan(200);
    await expect.poll(() => text('live-corruption'), { timeout: 20000 }).toMatch(/gaussian_noise, severity 3/);
    expect(await chartPixels()).not.toBe(before);
    const g1 = await text('live-g');
    await app.page.waitForTimeout(500);
    expect(await text('live-g')).not.toBe(g1);
    await app.screenshot('desk-playing-step');
    await app.page.getByTestId('pause').click();
    await expect.poll(() => app.page.getByTestId('play').isVisible()).toBe(true);
  });

  it('scrubs the paused recording: a recorded frame replayed at the current knobs, with its image', async () => {
    await recordStep(220);
    const scrub = app.page.getByTestId('scrub');
    await scrub.waitFor();
    await scrub.fill('10');
    await expect.poll(() => text('live-frame-index')).toBe('10');
    expect(await text('scrub-note')).toMatch(/recorded frame, replayed at the current knobs$/);
    expect(await text('live-corruption')).toBe('clean');
    await scrub.fill('200');
    await expect.poll(() => text('live-frame-index')).toBe('200');
    expect(await text('live-corruption')).toMatch(/gaussian_noise, severity 3/);
    await app.screenshot('desk-scrub');
  });

  it('switches variant and mode through the backend; reset mode shows its horizon', async () => {
    await app.page.getByTestId('variant').selectOption('instant');
    await expect.poll(async () => (await app.backend.handle('knobs.get', {})).gate.variant).toBe('instant');
    await app.page.getByTestId('mode').selectOption('reset');
    await expect.poll(async () => (await app.backend.handle('knobs.get', {})).gate.mode).toBe('reset');
    await expect(app.page.getByTestId('tau').isVisible()).resolves.toBe(true);
    await app.page.getByTestId('mode').selectOption('continuous');
    await app.page.getByTestId('variant').selectOption('second-order');
    await expect.poll(async () => (await app.backend.handle('knobs.get', {})).gate.variant).toBe('second-order');
    await app.screenshot('desk-variant-mode');
  });

  it('recomputes the calibration of everything recorded by replay, every value with its identity', async () => {
    await recordStep(60);
    await app.page.getByTestId('refresh-metrics').click();
    await expect.poll(() => app.page.getByTestId('metrics-facts').isVisible(), { timeout: 20000 }).toBe(true);
    expect(await text('metrics-facts')).toMatch(/labelled of \d+ frames/);
    await app.page.getByText(/All metrics \(\d+\)/).click();
    await app.page.getByTestId('metrics-table').waitFor();
    const identities = await app.page.getByTestId('metrics-table').locator('td:nth-child(2)').allTextContents();
    expect(identities).toContain('ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)');
    await app.screenshot('desk-calibration');
  });

  it('A/B: two settings replayed on the same trace, side by side, without the model', async () => {
    await recordStep(60);
    await app.page.getByTestId('take-a').click();
    await app.page.getByTestId('variant').selectOption('instant');
    await expect.poll(async () => (await app.backend.handle('knobs.get', {})).gate.variant).toBe('instant');
    await app.page.getByTestId('take-b').click();
    expect(await text('slot-a')).toMatch(/Knob-ODE/);
    expect(await text('slot-b')).toMatch(/Knob-IA/);
    await app.page.getByTestId('compare').click();
    await expect.poll(() => app.page.getByTestId('compare-facts').isVisible(), { timeout: 20000 }).toBe(true);
    expect(await text('compare-facts')).toMatch(/replayed twice in \d+ ms/);
    const rows = await app.page.getByTestId('compare-table').locator('tbody tr').allInnerTexts();
    expect(rows.length).toBeGreaterThanOrEqual(4);
    // Different settings, different NLL: the comparison is real.
    const nll = rows.find((r) => r.startsWith('NLL'))!.split('\t');
    expect(nll[1]).not.toBe(nll[2]);
    // Each difference with its paired interval and a verdict, agreeing with the backend's.
    const result = await app.backend.handle('metrics.compare', {
      a: (await app.backend.handle('knobs.get', {})).gate,
      b: (await app.backend.handle('knobs.get', {})).gate,
    });
    expect(result.differences.map((d) => d.name)).toEqual(['accuracy', 'NLL', 'Brier', 'ECE']);
    for (const row of rows) {
      const cells = row.split('\t');
      expect(cells[4]).toMatch(/^\[[-+]?[\d.e-]+, [-+]?[\d.e-]+\]$/);
      expect(['B better', 'B worse', 'indistinguishable']).toContain(cells[5]);
    }
    await app.page.getByTestId('variant').selectOption('second-order');
    await app.screenshot('desk-compare');
  });

  it('operator feedback: hotkeys work only in labelling mode, correct the frame on screen and the metrics use it', async () => {
    await recordStep(30);
    const corrections = (): Promise<number> =>
      app.backend.handle('session.get', {}).then((s) => s.recording!.labels.corrections);
    await app.page.locator('body').click({ position: { x: 5, y: 890 } });
    const frame = Number(await text('live-frame-index'));
    // outside labelling mode a bare digit changes nothing
    await app.page.keyboard.press('3');
    await app.page.keyboard.press('x');
    expect(await app.page.getByText('Wrong: press the digit of the true class.').isVisible()).toBe(false);
    expect(await corrections()).toBe(0);
    expect(await app.page.getByTestId('labelling-banner').isVisible()).toBe(false);
    await app.page.getByTestId('labelling-mode').click();
    await expect.poll(() => app.page.getByTestId('labelling-banner').isVisible()).toBe(true);
    await app.page.locator('body').click({ position: { x: 5, y: 890 } });
    await app.page.keyboard.press('x');
    await expect.poll(() => app.page.getByText('Wrong: press the digit of the true class.').isVisible()).toBe(true);
    await app.page.keyboard.press('3');
    await expect.poll(() => text('feedback')).toMatch(new RegExp(`frame ${frame} corrected: corrected to Dress`));
    expect(await text('live-label-layers')).toMatch(/operator's correction: Dress/);
    expect(await corrections()).toBe(1);
    await app.page.keyboard.press('Escape');
    await expect.poll(() => app.page.getByTestId('labelling-banner').isVisible()).toBe(false);
    await app.screenshot('desk-feedback');
  });

  it('exports a bundle that knob verify accepts, and re-imports it with a verification line', async () => {
    await recordStep(30);
    const dir = mkdtempSync(join(tmpdir(), 'knob-export-'));
    const bundle = join(dir, 'desk.knob.zip');
    await app.page.getByTestId('export-path').fill(bundle);
    await app.page.getByTestId('export').click();
    await expect.poll(() => app.page.getByTestId('export-result').isVisible(), { timeout: 30000 }).toBe(true);
    expect(await text('export-result')).toMatch(
      /desk\.knob\.zip: \d+ members, \d+ KB; deploy: step graph and Triton repository/,
    );
    const verify = spawnSync(process.execPath, ['bin/knob.mjs', 'verify', bundle], { encoding: 'utf8' });
    expect(verify.status, verify.stderr).toBe(0);
    expect(verify.stdout).toMatch(/equivalence: step graph = app within/);
    const zeta = (await app.backend.handle('knobs.get', {})).gate.zeta;
    await app.backend.handle('knobs.set', { gate: { zeta: 1.9 } });
    await app.page.getByTestId('import-path').fill(bundle);
    await app.page.getByTestId('import').click();
    await expect.poll(() => app.page.getByTestId('import-result').isVisible()).toBe(true);
    expect(await text('import-result')).toMatch(/bundle sound .*hashes match.*same model as the one loaded/);
    expect((await app.backend.handle('knobs.get', {})).gate.zeta).toBe(zeta);
    // Imported while another model is loaded: the panel offers the bundle's own model, and loads it.
    const sample = fashionMnistSample(200);
    const other = join(dir, 'other.onnx');
    writeFileSync(other, linearClassifier(classMeanWeights(sample.images, sample.labels, 10, 4)));
    await app.backend.handle('model.load', { path: other, discard: true });
    await app.page.getByTestId('import').click();
    await expect.poll(() => text('bundle-model'), { timeout: 20000 }).toMatch(/tuned with knob-fmnist\.onnx/);
    await app.page.getByTestId('bundle-model-load').click();
    await expect.poll(() => text('model-name'), { timeout: 30000 }).toMatch(/\.onnx$/);
    await expect
      .poll(async () => (await app.backend.handle('model.info', {}))?.contract, { timeout: 30000 })
      .toBe('knob-native');
    await app.page.getByTestId('import-path').fill(join(dir, 'missing.json'));
    await app.page.getByTestId('import').click();
    await expect.poll(() => text('export-error')).toMatch(/missing\.json: cannot be read \(does not exist\)/);
    await app.screenshot('desk-export-import');
  });

  it('runs the whole source offline with progress, can cancel it, and keeps what it computed', async () => {
    // A slow corruption (about 1,000 frames/s here), so the run is still going when cancelled.
    await app.page.getByTestId('schedule-kind').selectOption('constant');
    await app.page.getByTestId('schedule-corruption').selectOption('elastic_transform');
    await openSourceAndWait();
    await app.page.getByTestId('run-offline').click();
    await expect.poll(() => app.page.getByTestId('work-progress').isVisible(), { timeout: 10000 }).toBe(true);
    await expect
      .poll(async () => Number((await text('work-progress')).match(/([\d,]+)/)![1].replace(/,/g, '')), {
        timeout: 20000,
      })
      .toBeGreaterThan(0);
    // dispatchEvent: Playwright's actionability check intermittently reports the button (whose row
    // re-lays out ten times a second with the progress) as not visible; the click itself is real.
    await app.page.getByTestId('cancel-work').dispatchEvent('click');
    await expect.poll(() => app.page.getByTestId('work-progress').isVisible(), { timeout: 20000 }).toBe(false);
    await expect
      .poll(async () => (await app.backend.handle('session.get', {})).state, { timeout: 20000 })
      .toBe('paused');
    // what the run recorded before the cancel (its progress counts recorded frames, and was past 0);
    // the desk's count follows with its next update, which on a loaded machine comes after the pause
    const kept = (await app.backend.handle('session.get', {})).recording!.frameCount;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(10000);
    await expect.poll(async () => Number(await text('frames-processed')), { timeout: 20000 }).toBe(kept);
    await expect.poll(() => text('metrics-facts'), { timeout: 20000 }).toMatch(new RegExp(`of ${kept} frames`));
    await app.screenshot('desk-offline-cancelled');
  });

  it('seeks while paused and keeps the recording; a reload finds the recording and the position', async () => {
    const recorded = await recordStep(40);
    await app.page.getByTestId('seek').fill('5000');
    await app.page.getByTestId('seek').dispatchEvent('change');
    await expect.poll(() => text('frame-counter')).toMatch(/^frame 5,000 \/ 10,000/);
    expect(Number(await text('frames-processed'))).toBe(recorded);
    await app.screenshot('desk-seek');
    await app.page.reload();
    await app.page.getByTestId('model-name').waitFor();
    await expect.poll(() => text('frame-counter'), { timeout: 20000 }).toMatch(/^frame 5,000 \/ 10,000/);
    expect(Number(await text('frames-processed'))).toBe(recorded);
    expect(await text('source-name')).toMatch(/embedded Fashion-MNIST test set/);
    // Playing on continues the same recording from the new position.
    await app.page.getByTestId('play').click();
    await expect.poll(async () => Number(await text('frames-processed')), { timeout: 20000 }).toBeGreaterThan(recorded);
    await app.page.getByTestId('pause').click();
    const state = await app.backend.handle('session.get', {});
    expect(state.playback.position).toBeGreaterThan(5000);
    expect(app.pageErrors).toEqual([]);
  });

  it('asks before a recording with unsaved work is discarded: Cancel keeps it, Discard replaces it', async () => {
    const recorded = await recordStep(30);
    const before = (await app.backend.handle('session.get', {})).recording!;
    await app.page.getByTestId('open-source').click();
    await app.page.getByTestId('confirm-dialog').waitFor({ state: 'visible' });
    await app.screenshot('desk-discard-question');
    const question = await answerConfirmation(app, 'cancel');
    expect(question).toMatch(
      /Opening a source would discard the current recording \(\d+ frames, \d+ labelled, never saved\)/,
    );
    expect((await app.backend.handle('session.get', {})).recording).toMatchObject({
      id: before.id,
      frameCount: recorded,
    });
    expect(Number(await text('frames-processed'))).toBe(recorded);
    await openSourceAndWait('accept');
    expect((await app.backend.handle('session.get', {})).recording).toBeNull();
    expect(Number(await text('frames-processed'))).toBe(0);
  });

  it('opens a video file by path and plays it through the model', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'knob-video-'));
    const video = join(dir, 'clip.mp4');
    testPatternVideo(video, 4, '96x96', 25);
    await app.page.getByTestId('source-kind').selectOption('video');
    await app.page.getByTestId('source-path').fill(video);
    await app.page.getByTestId('schedule-kind').selectOption('none');
    await openSourceAndWait();
    expect(await text('source-name')).toMatch(/video 96 x 96 at 25\.000 fps, 100 frames, decoded to 28 x 28/);
    await app.page.getByTestId('loop').check();
    await app.page.getByTestId('speed').selectOption('4');
    await app.page.getByTestId('play').click();
    await expect.poll(async () => Number(await text('frames-processed')), { timeout: 20000 }).toBeGreaterThan(20);
    expect(await text('live-corruption')).toBe('clean');
    await app.screenshot('desk-video');
    // Looping: more frames than the 100 of the clip, on one increasing clock.
    await expect.poll(async () => Number(await text('frames-processed')), { timeout: 30000 }).toBeGreaterThan(130);
    await app.page.getByTestId('pause').click();
  });

  it('loads another model from the model panel, reports its contract and sources, and explains a drop in browser mode', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'knob-model-'));
    const sample = fashionMnistSample(600);
    const classifier = join(dir, 'classifier.onnx');
    writeFileSync(classifier, linearClassifier(classMeanWeights(sample.images, sample.labels, 10, 4)));
    await app.page.getByTestId('model-path').fill(classifier);
    await app.page.getByTestId('load-model').click();
    await expect.poll(() => text('model-name'), { timeout: 20000 }).toBe('classifier.onnx');
    expect(await text('model-contract')).toBe('single-classifier');
    expect(await text('model-details')).toMatch(/from input-shape/);
    expect(await text('model-details')).toMatch(/T0 2, u\* by entropy/);
    // A bad preprocessing override is refused before anything is sent.
    await app.page.getByText('Override the preprocessing (input spec)').click();
    await app.page.getByTestId('input-spec').fill('{ not json');
    await app.page.getByTestId('load-model').click();
    await expect.poll(() => text('model-local-error')).toMatch(/preprocessing: not valid JSON/);
    await app.page.getByText('Override the preprocessing (input spec)').click();
    // Dropping a file in browser mode says why it cannot be used.
    await app.page.locator('section.model').dispatchEvent('drop', {
      dataTransfer: await app.page.evaluateHandle(() => {
        const transfer = new DataTransfer();
        transfer.items.add(new File(['x'], 'dropped.onnx'));
        return transfer;
      }),
    });
    await expect.poll(() => text('model-local-error')).toMatch(/dropping 'dropped\.onnx' needs the desktop app/);
    await app.screenshot('desk-model-panel');
  });

  it('has no serious or critical accessibility violations (axe-core)', async () => {
    await app.page.evaluate(axeSource);
    const violations = await app.page.evaluate(async () => {
      const result = await (
        window as unknown as {
          axe: {
            run: (
              context: Document,
              options: object,
            ) => Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }>;
          };
        }
      ).axe.run(document, {
        resultTypes: ['violations'],
      });
      return result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')),
      }));
    });
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    process.stdout.write(
      `axe-core: ${violations.length} violations (${violations.map((v) => `${v.id}:${v.impact}`).join(', ') || 'none'})\n`,
    );
    expect(serious).toEqual([]);
    await app.screenshot('desk-accessibility-audit');
  });
});
