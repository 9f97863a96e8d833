/**
 * The condition-aware calibrator in the real desk (Chromium, browser mode; issue 30): a trace of a
 * mixed stream (contrast, shot noise, speckle noise, each held at severity 5 for 200 frames, with
 * the model's features) is loaded; the Calibrators panel fits and compares the condition-aware
 * calibrator with the hysteresis the operator sets, Apply puts it on, and scrubbing from a frame of one corruption to a frame of another
 * switches the condition the Live panel says it applies; the gate chart marks where the condition
 * switches along the recording, and a listed switch shows its frame.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import type { BrowserMode } from '../support/browser-mode';
import { startDesk, testIdText, waitUntil } from '../support/desk-page';
import { mixedConditionsRun } from '../support/knob-cli';

let app: BrowserMode;
const dir = mkdtempSync(join(tmpdir(), 'knob-conditional-desk-'));
const trace = join(dir, 'mixed', 'trace.arrow');
const FRAMES = 2400;

beforeAll(async () => {
  await mixedConditionsRun(join(dir, 'mixed'), FRAMES);
  app = await startDesk();
}, 120_000);
afterAll(async () => app?.close());

describe('the condition-aware calibrator in the desk', () => {
  it('is fitted and applied from the Calibrators panel, and the Live panel switches with the detected condition', async () => {
    await app.backend.handle('trace.load', { path: trace, discard: true });
    await waitUntil('the trace', async () => Number(await testIdText(app, 'frames-processed')) === FRAMES);
    for (const box of await app.page.locator('[data-testid^="calibrator-method-"]').all())
      if (await box.isChecked()) await box.uncheck();
    await app.page.getByTestId('calibrator-method-conditional').check();
    await app.page.getByTestId('calibrator-split').selectOption('random');
    // the hysteresis is the operator's to set, and the applied calibrator states it
    await app.page.getByTestId('calibrator-hysteresis').fill('3');
    await app.page.getByTestId('calibrator-compare').click();
    await app.page.getByTestId('calibrator-apply-conditional').click({ timeout: 60_000 });
    await expect
      .poll(() => testIdText(app, 'calibrator-status'))
      .toMatch(/condition-aware calibration, .*hysteresis 3 frames/);

    // two frames, each of another corruption, that the detector reads as their own
    const { trace: recorded } = await readTraceFile(trace);
    const corruption = recorded.metadata.corruption!;
    if (corruption.kind !== 'category') throw new Error('no corruption column');
    const chosen = new Map<string, number>();
    for (let frame = 100; frame < FRAMES && chosen.size < 2; frame += 200) {
      const name = corruption.dictionary[corruption.codes[frame]!]!;
      const view = await app.backend.handle('trace.frame', { frame });
      if (!chosen.has(name) && view.calibratorCondition === name) chosen.set(name, frame);
    }
    expect(chosen.size).toBe(2);
    for (const [name, frame] of chosen) {
      await app.page.getByTestId('scrub').fill(String(frame));
      await expect.poll(() => testIdText(app, 'live-frame-index')).toBe(String(frame));
      await expect.poll(() => testIdText(app, 'live-condition')).toBe(name);
    }

    // the gate chart marks where the applied condition switches, as the recording's series lists
    // them, and a listed switch shows its frame with its condition
    const series = await app.backend.handle('recording.series', { maxPoints: 1800 });
    const switches = series.calibratorConditions!;
    expect(switches.switches.length).toBeGreaterThanOrEqual(3);
    for (const name of chosen.keys()) expect(switches.switches.map((s) => s.condition)).toContain(name);
    await expect
      .poll(() => app.page.getByTestId('gate-chart').getAttribute('data-condition-marks'))
      .toBe(String(switches.switches.length));
    await expect
      .poll(() => app.page.getByTestId('condition-switches').getAttribute('data-switch-count'))
      .toBe(String(switches.switchCount));
    const second = switches.switches[1]!;
    await app.page.getByTestId('condition-switches').getByRole('button').nth(1).click();
    await expect.poll(() => testIdText(app, 'live-frame-index')).toBe(String(second.frame));
    await expect.poll(() => testIdText(app, 'live-condition')).toBe(second.condition);
    await app.screenshot('desk-conditional-calibrator');
    expect(app.pageErrors).toEqual([]);
  }, 180_000);
});
