/**
 * The desk fits the screens operators use (issue 32, deliverable 2): at 1280 x 800, 1600 x 1000 and
 * 1920 x 1080, with its widest tables on screen (the calibrators compared, the metrics by group, every
 * metric with its identity, the prediction sets by corruption), the page has no horizontal scroll and every table either fits
 * its panel or scrolls sideways inside a region of its own, so no column is cut off; every chart titles
 * both its axes. A screenshot of
 * each size goes to test-output/e2e/layout-WIDTHxHEIGHT.png.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserMode } from '../support/browser-mode';
import { startDesk, testIdText, waitUntil } from '../support/desk-page';
import { knob } from '../support/knob-cli';

let app: BrowserMode;
const dir = mkdtempSync(join(tmpdir(), 'knob-layout-'));
const FRAMES = 1200;
const SIZES = [
  { width: 1280, height: 800 },
  { width: 1600, height: 1000 },
  { width: 1920, height: 1080 },
] as const;

beforeAll(async () => {
  const run = await knob(
    'run',
    '--source',
    'default',
    '--limit',
    String(FRAMES),
    '--record-features',
    '--schedule',
    'random',
    '--corruptions',
    'contrast,shot_noise,fog',
    '--hold',
    '100',
    '--out',
    join(dir, 'run'),
  );
  if (run.status !== 0) throw new Error(run.stderr);
  app = await startDesk([], undefined, { recentRunsFolder: join(dir, 'runs') });
}, 120_000);
afterAll(async () => app?.close());

/**
 * What does not fit, in words: the page wider than the window, or a table wider than its panel
 * with no region between them that scrolls sideways.
 */
function overflows(): Promise<string[]> {
  return app.page.evaluate(() => {
    const problems: string[] = [];
    const page = document.documentElement;
    if (page.scrollWidth > window.innerWidth) {
      // the outermost elements past the window's right edge: what widens the page
      const past = Array.from(document.querySelectorAll<HTMLElement>('body *')).filter(
        (e) => e.getBoundingClientRect().right > window.innerWidth + 1,
      );
      const outermost = past.filter((e) => !past.includes(e.parentElement!)).slice(0, 5);
      const named = (e: HTMLElement) =>
        `${e.tagName.toLowerCase()}${e.dataset.testid ? `[${e.dataset.testid}]` : ''}.${e.className} (${Math.round(e.getBoundingClientRect().width)} px)`;
      problems.push(
        `the page is ${page.scrollWidth} px wide in a ${window.innerWidth} px window: ${outermost.map(named).join(', ')}`,
      );
    }
    for (const table of Array.from(document.querySelectorAll('table'))) {
      if (table.getClientRects().length === 0) continue; // not shown (a closed tab or details)
      const name = table.dataset.testid ?? table.getAttribute('aria-label') ?? table.className;
      let box = table.parentElement;
      let scrolls = false;
      while (box !== null && !box.classList.contains('panel')) {
        const overflowX = getComputedStyle(box).overflowX;
        if (overflowX === 'auto' || overflowX === 'scroll') {
          scrolls = true;
          break;
        }
        box = box.parentElement;
      }
      if (scrolls) continue;
      const panel = (box ?? document.body).getBoundingClientRect();
      const own = table.getBoundingClientRect();
      if (own.right > panel.right + 1 || own.left < panel.left - 1)
        problems.push(
          `table '${name}' spans ${Math.round(own.left)}-${Math.round(own.right)} px in a panel of ${Math.round(panel.left)}-${Math.round(panel.right)} px, with nothing scrolling it`,
        );
    }
    return problems;
  });
}

/** Two animation frames: the layout after a resize is the one measured. */
const laidOut = () =>
  app.page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));

describe('the layout', () => {
  it('fits at 1280 x 800, 1600 x 1000 and 1920 x 1080 with the widest tables on screen', async () => {
    await app.backend.handle('trace.load', { path: join(dir, 'run', 'trace.arrow'), discard: true });
    await waitUntil('the trace', async () => Number(await testIdText(app, 'frames-processed')) === FRAMES);
    // the metrics by corruption, and every metric with its identity
    await app.page.getByTestId('metrics-group').selectOption('corruption');
    await app.page.getByTestId('metrics-groups').waitFor({ timeout: 60_000 });
    await app.page.getByText(/^All metrics \(\d+\), each with its identity$/).click();
    await app.page.getByTestId('metrics-table').waitFor();
    // the default calibrators fitted and compared
    await app.page.getByTestId('calibrator-compare').click();
    await app.page.getByTestId('calibrator-table').waitFor({ timeout: 120_000 });
    await app.page.locator('[data-testid^="calibrator-apply-"]').first().waitFor({ timeout: 120_000 });
    // the prediction sets by corruption
    await app.page.getByTestId('conformal-group').selectOption('corruption');
    await app.page.getByTestId('conformal-compute').click();
    await app.page.getByTestId('conformal-table').waitFor({ timeout: 60_000 });

    const found: Record<string, string[]> = {};
    for (const size of SIZES) {
      await app.page.setViewportSize(size);
      await laidOut();
      found[`${size.width}x${size.height}`] = await overflows();
      await app.screenshot(`layout-${size.width}x${size.height}`);
    }
    expect(found).toEqual({ '1280x800': [], '1600x1000': [], '1920x1080': [] });

    // every chart on screen titles both axes (issue 32: the gate and rolling charts had no y title)
    const titles = await app.page.evaluate(() =>
      Array.from(document.querySelectorAll<HTMLElement>('.chart'))
        .filter((chart) => chart.querySelector('canvas') !== null)
        .map((chart) => ({ chart: chart.dataset.testid, x: chart.dataset.xTitle, y: chart.dataset.yTitle })),
    );
    expect(titles.map((t) => t.chart)).toEqual(expect.arrayContaining(['gate-chart', 'rolling-chart', 'gate-preview']));
    for (const title of titles)
      expect(title, title.chart).toMatchObject({ x: expect.any(String), y: expect.any(String) });
    for (const title of titles) expect(title.y!.length * title.x!.length, title.chart).toBeGreaterThan(0);
    expect(app.pageErrors).toEqual([]);
  }, 300_000);
});
