/**
 * The operator's desk in Debian's Chromium through browser mode, with the real core: the default
 * model and stream load by themselves; a step schedule plays and the gate chart and live view move;
 * variant and mode switch; metrics recompute by replay; an accessibility audit (axe-core) of the
 * main view; and the frame-rate budget while a 60 fps stream plays for 20 s.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrowserMode, type BrowserMode } from '../support/browser-mode';

let app: BrowserMode;
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

beforeAll(async () => {
  app = await startBrowserMode();
  await app.page.getByTestId('model-name').waitFor();
});
afterAll(async () => app?.close());

const text = (id: string): Promise<string> => app.page.getByTestId(id).innerText();
const sourceGeneration = async (): Promise<number> => Number(await app.page.getByTestId('source-name').getAttribute('data-generation'));

async function openSourceAndWait(): Promise<void> {
  const before = await sourceGeneration();
  await app.page.getByTestId('open-source').click();
  await expect.poll(sourceGeneration, { timeout: 20000 }).toBeGreaterThan(before);
}
const chartPixels = (): Promise<string> => app.page.locator('[data-testid="stream-chart"] canvas').evaluate((canvas: HTMLCanvasElement) => canvas.toDataURL());

describe('the desk in browser mode', () => {
  it('opens with the default model and the embedded stream, and says which provider runs', async () => {
    await expect.poll(() => text('model-name'), { timeout: 20000 }).toBe('knob-fmnist.onnx');
    expect(await text('model-contract')).toBe('knob-native');
    expect(await text('model-provider')).toBe('cpu');
    await expect.poll(() => text('source-name'), { timeout: 20000 }).toMatch(/embedded Fashion-MNIST test set \(10000 images\)/);
    expect(app.pageErrors).toEqual([]);
    await app.screenshot('desk-open');
  });

  it('plays a step schedule: frames reach the model, the live view and the gate chart move, the corruption shows', async () => {
    await app.page.getByTestId('schedule-kind').selectOption('step');
    await openSourceAndWait();
    const before = await chartPixels();
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

  it('switches variant and mode through the backend; reset mode shows its horizon', async () => {
    await app.page.getByTestId('variant').selectOption('instant');
    await expect.poll(async () => (await app.backend.handle('knobs.get', {})).gate.variant).toBe('instant');
    await app.page.getByTestId('mode').selectOption('reset');
    await expect.poll(async () => (await app.backend.handle('knobs.get', {})).gate.mode).toBe('reset');
    await expect(app.page.getByTestId('tau').isVisible()).resolves.toBe(true);
    await app.page.getByTestId('mode').selectOption('continuous');
    await app.page.getByTestId('variant').selectOption('second-order');
    await expect.poll(async () => (await app.backend.handle('knobs.get', {})).gate.variant).toBe('second-order');
  });

  it('recomputes the calibration of everything recorded by replay, every value with its identity', async () => {
    await app.page.getByTestId('refresh-metrics').click();
    await expect.poll(() => app.page.getByTestId('metrics-facts').isVisible(), { timeout: 20000 }).toBe(true);
    expect(await text('metrics-facts')).toMatch(/labelled of \d+ frames/);
    const identities = await app.page.getByTestId('metrics-table').locator('td:nth-child(2)').allTextContents();
    expect(identities).toContain('ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)');
    await app.screenshot('desk-calibration');
  });

  it('has no serious or critical accessibility violations (axe-core)', async () => {
    await app.page.evaluate(axeSource);
    const violations = await app.page.evaluate(async () => {
      const result = await (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> } }).axe.run(document, {
        resultTypes: ['violations'],
      });
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
    });
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    process.stdout.write(`axe-core: ${violations.length} violations (${violations.map((v) => `${v.id}:${v.impact}`).join(', ') || 'none'})\n`);
    expect(serious).toEqual([]);
  });

  it('keeps the page at 55+ fps with no long task over 50 ms while a 60 fps stream plays for 20 s', async () => {
    await app.page.getByTestId('schedule-kind').selectOption('sine');
    await app.page.locator('label', { hasText: 'frame rate (Hz)' }).locator('input').fill('60');
    await openSourceAndWait();
    await app.page.evaluate(() => {
      const w = window as unknown as { knobFrames: number[]; knobLongTasks: number[]; knobMeasuring: boolean };
      w.knobFrames = [];
      w.knobLongTasks = [];
      w.knobMeasuring = true;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) w.knobLongTasks.push(entry.duration);
      }).observe({ type: 'longtask', buffered: false });
      let last = performance.now();
      const tick = (now: number): void => {
        w.knobFrames.push(now - last);
        last = now;
        if (w.knobMeasuring) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    await app.page.getByTestId('play').click();
    await app.page.waitForTimeout(20000);
    const figures = await app.page.evaluate(() => {
      const w = window as unknown as { knobFrames: number[]; knobLongTasks: number[]; knobMeasuring: boolean };
      w.knobMeasuring = false;
      const intervals = w.knobFrames.slice(5).sort((a, b) => a - b);
      return { frames: intervals.length, medianIntervalMs: intervals[intervals.length >> 1], p95IntervalMs: intervals[Math.floor(intervals.length * 0.95)], longTasks: w.knobLongTasks };
    });
    await app.page.getByTestId('pause').click();
    const processed = Number(await text('frames-processed'));
    const medianFps = 1000 / figures.medianIntervalMs;
    process.stdout.write(
      `desk performance: median ${medianFps.toFixed(1)} fps (p95 frame interval ${figures.p95IntervalMs.toFixed(1)} ms) over ${figures.frames} frames; ` +
        `long tasks: ${figures.longTasks.length} (max ${Math.max(0, ...figures.longTasks).toFixed(0)} ms); stream frames processed ${processed}\n`,
    );
    expect(processed).toBeGreaterThan(1000);
    expect(medianFps).toBeGreaterThanOrEqual(55);
    expect(Math.max(0, ...figures.longTasks)).toBeLessThanOrEqual(50);
  }, 60000);
});
