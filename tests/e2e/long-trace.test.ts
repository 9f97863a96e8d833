/**
 * A long, many-class trace in the real desk (issue 29; Chromium, browser mode, the real backend):
 * opened by its path, the desk shows the work on the work bar (reading it, then its fused-score
 * tables being built in the metrics worker) and computes its calibration by itself, without
 * Recompute; with 400 classes the knob-turn figures leave out what reads every class, say so, and
 * "Compute every class" computes the classwise metrics. The same trace kept at 8 classes a frame
 * (`knob compact`) opens too: the view says what it keeps, each headline value and each row of the
 * table how far the full trace's can lie, the rolling chart why it has no line, and a scrubbed frame
 * what of its readout is estimated.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeTraceFile } from '../../src-main/core/recording/trace-arrow';
import { keepLeadingClasses } from '../../src-shared/trace/kept-classes';
import type { BrowserMode } from '../support/browser-mode';
import { startDesk, testIdText, waitUntil } from '../support/desk-page';
import { syntheticTrace } from '../support/synthetic-trace';

let app: BrowserMode;
const dir = mkdtempSync(join(tmpdir(), 'knob-long-trace-e2e-'));
const path = join(dir, 'long.arrow');
const long = syntheticTrace({ frames: 20_000, classCount: 400, seed: 3 });
writeFileSync(path, encodeTraceFile(long, null));
const keptPath = join(dir, 'kept.arrow');
const keptClasses = keepLeadingClasses(long, 8);
writeFileSync(
  keptPath,
  encodeTraceFile({ ...long, zStatic: new Float32Array(0), zDyn: new Float32Array(0), keptClasses }, null),
);

beforeEach(async () => {
  app = await startDesk();
});
afterEach(async () => app?.close());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a long trace of many classes', () => {
  it('shows its progress and computes its calibration by itself; every class when asked', async () => {
    // every task the work bar shows while the trace opens and its first view is computed
    await app.page.evaluate(() => {
      const seen = new Set<string>();
      (window as unknown as { knobTasks: Set<string> }).knobTasks = seen;
      const bar = document.querySelector('[data-testid="work-progress"]')!;
      new MutationObserver(() => {
        if (!bar.hasAttribute('hidden')) seen.add(bar.querySelector('.task')?.textContent ?? '');
      }).observe(bar, { attributes: true, childList: true, subtree: true, characterData: true });
    });
    await app.page.getByTestId('trace-path').fill(path);
    await app.page.getByTestId('open-trace').click();
    const facts = app.page.getByTestId('metrics-facts');
    await facts.waitFor({ timeout: 120_000 });
    expect(await testIdText(app, 'metrics-facts')).toMatch(/20000 labelled of 20000 frames/);
    const tasks = await app.page.evaluate(() => [...(window as unknown as { knobTasks: Set<string> }).knobTasks]);
    expect(tasks).toContain('fused scores of the recording');
    // the knob turn's figures: classwise ones left out, and said
    const note = app.page.getByTestId('metrics-classes-left-out');
    await note.waitFor();
    expect(await note.innerText()).toMatch(
      /With 400 classes a knob turn computes the top-label figures, NLL and Brier only/,
    );
    await app.page.getByTestId('metrics-every-class').click();
    await waitUntil('every class computed', async () => (await note.count()) === 0, 120_000);
    expect(app.pageErrors).toEqual([]);
  }, 300_000);

  it("a kept-class trace: each figure with how far the full trace's can lie", async () => {
    await app.page.getByTestId('trace-path').fill(keptPath);
    await app.page.getByTestId('open-trace').click();
    const kept = app.page.getByTestId('metrics-kept');
    await kept.waitFor({ timeout: 120_000 });
    expect(await kept.innerText()).toMatch(/A kept-class trace \(8 of 400 classes kept a frame\)/);
    // the headline values: a bound under each, but TCE's, which has none and says so
    const bounds = app.page.getByTestId('metric-bound');
    await bounds.first().waitFor();
    const shown = await bounds.allInnerTexts();
    expect(shown.filter((text) => /^full trace ±\d/.test(text)).length).toBeGreaterThanOrEqual(6);
    expect(shown.filter((text) => !/^full trace ±\d/.test(text))).toEqual(['no stated bound']);
    // every row of the table: its bound, or why it has none
    await app.page.getByText(/^All metrics \(\d+\)/).click();
    const table = app.page.getByTestId('metrics-table');
    await table.waitFor();
    expect(await table.locator('thead').innerText()).toMatch(/full trace within/);
    expect(await testIdText(app, 'rolling-empty')).toMatch(/A kept-class trace \(8 of 400 classes kept a frame\)/);
    // a scrubbed frame: its readout from the kept classes, saying what is estimated
    const scrub = app.page.getByTestId('scrub');
    await scrub.waitFor();
    await scrub.fill('100');
    const note = app.page.getByTestId('frame-approximation');
    await note.waitFor();
    expect(await note.innerText()).toMatch(/^8 of 400 classes kept a frame: the branches' probabilities exact/);
    expect(app.pageErrors).toEqual([]);
  }, 300_000);
});
