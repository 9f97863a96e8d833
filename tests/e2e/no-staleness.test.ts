/**
 * No silent staleness (issue 27, 7) in the real desk (Chromium, browser mode, the real backend):
 * a knob turned while paused redraws the Rolling chart at the new knobs by replay (it does not go
 * blank); an applied calibrator shows in the Live panel's numbers at once; a loaded trace computes
 * its calibration by itself; the idle Live panel asks only for what can be done; the Tune tab's
 * figures and table name the same frames, and the tuner stays inside the knobs' ranges.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatProbability } from '../../src-shared/metrics/metric-format';
import { DESK_KNOB_RANGES, outsideKnobRanges } from '../../src-shared/tuning/knob-ranges';
import type { BrowserMode } from '../support/browser-mode';
import { openSourceAndWait, recordFrames, startDesk, testIdText, waitUntil } from '../support/desk-page';

let app: BrowserMode;
const dir = mkdtempSync(join(tmpdir(), 'knob-no-staleness-e2e-'));
beforeEach(async () => {
  app = await startDesk();
});
afterEach(async () => app?.close());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const text = (id: string): Promise<string> => testIdText(app, id);
const drawnPoints = async (kind: 'gate' | 'rolling'): Promise<number> =>
  Number(await app.page.getByTestId(`${kind}-chart`).getAttribute('data-drawn-points'));
const rollingPixels = (): Promise<string> =>
  app.page.locator('[data-testid="rolling-chart"] canvas').evaluate((canvas: HTMLCanvasElement) => canvas.toDataURL());
const version = async (): Promise<number> => (await app.backend.handle('knobs.get', {})).version;

async function recordStep(frames: number): Promise<number> {
  await app.page.getByTestId('schedule-kind').selectOption('step');
  await openSourceAndWait(app);
  await app.page.getByTestId('speed').selectOption('4');
  return recordFrames(app, frames);
}

describe('no silent staleness in the desk', () => {
  it('a knob turned while paused keeps the Rolling chart, replayed at the new knobs', async () => {
    await recordStep(240);
    await waitUntil('the rolling chart drawn', async () => (await drawnPoints('rolling')) > 0);
    expect(await app.page.getByTestId('rolling-empty').count()).toBe(0);
    const before = await rollingPixels();
    const from = await version();
    // a much slower gate: g lags the step, the output's rolling figures move with it
    await app.page.locator('#knob-wn').focus();
    for (let i = 0; i < 3; i++) await app.page.keyboard.press('PageDown');
    await waitUntil('the knobs to change', async () => (await version()) > from);
    await waitUntil('the rolling chart redrawn at the new knobs', async () => (await rollingPixels()) !== before);
    // the replay drew a rolling line (the bug: it went blank), and the gate chart too
    await waitUntil('the rolling points', async () => (await drawnPoints('rolling')) > 100);
    expect(await drawnPoints('gate')).toBe(await drawnPoints('rolling'));
    expect(await app.page.getByTestId('rolling-empty').count()).toBe(0);
    expect(app.pageErrors).toEqual([]);
  }, 90_000);

  it('an applied calibrator shows in the Live panel at once, paused', async () => {
    await recordStep(200);
    const shown = Number(await text('live-frame-index'));
    const before = await text('live-top');
    await app.page.getByTestId('calibrator-compare').click();
    const apply = app.page.locator('[data-testid^="calibrator-apply-"]').first();
    await apply.waitFor({ timeout: 30000 });
    await apply.click();
    await waitUntil(
      'the calibrator applied',
      async () => (await app.backend.handle('knobs.get', {})).calibrator !== null,
    );
    // the frame on screen, as the backend replays it with the calibrator now (read on each poll: a
    // last live update sent before the pause may still move the panel to a later frame)
    await waitUntil('the calibrated numbers on screen', async () => {
      const frame = Number(await text('live-frame-index'));
      const expected = await app.backend.handle('trace.frame', { frame });
      return (await text('live-top')).includes(formatProbability(expected.top[0].fused));
    });
    expect(await text('live-top')).toMatch(/fused, calibrated/);
    if (Number(await text('live-frame-index')) === shown) expect(await text('live-top')).not.toBe(before);
  }, 90_000);

  it('a loaded trace computes its calibration by itself, never asking to play', async () => {
    const recorded = await recordStep(150);
    const path = join(dir, 'recorded.arrow');
    await app.backend.handle('trace.save', { path });
    await app.backend.handle('recording.reset', { discard: true });
    await waitUntil('an empty recording', async () => Number(await text('frames-processed')) === 0);
    const seen = new Set<string>();
    const panel = app.page.locator('section', { has: app.page.getByTestId('refresh-metrics') });
    await app.backend.handle('trace.load', { path, discard: true });
    await waitUntil('the calibration computed', async () => {
      seen.add(await panel.innerText());
      return app.page.getByTestId('metrics-facts').isVisible();
    });
    expect(await text('metrics-facts')).toMatch(new RegExp(`of ${recorded} frames`));
    for (const shownText of seen) expect(shownText).not.toMatch(/Play the stream, then recompute/);
  }, 90_000);

  it('the idle Live panel asks for what can be done now', async () => {
    // settled: a source open, nothing recorded, paused
    expect(await text('live-idle')).toBe('Press ▶ to play the stream.');
    expect(await app.page.getByTestId('play').isEnabled()).toBe(true);
  });

  it('the Tune tab: figures and table on the same frames, every setting inside the knobs', async () => {
    await recordStep(600);
    await app.page.getByRole('tab', { name: 'Tune' }).click();
    await app.page.getByTestId('tune-run').click();
    await app.page.getByTestId('tune-table').waitFor({ timeout: 60000 });
    const facts = await text('tune-facts');
    const searched = /searched on (\d+) frames/.exec(facts)![1];
    expect(await text('tune-table-metric')).toBe(`ece (search, ${searched} frames)`);
    expect(await text('tune-heatmap-frames')).toMatch(new RegExp(`^ece on ${searched} search frames`));
    if ((await app.page.getByTestId('tune-pareto-frames').count()) > 0)
      expect(await text('tune-pareto-frames')).toBe(await text('tune-heatmap-frames'));
    // every heat-map cell is a setting the knobs can show
    const cells = await app.page
      .locator('[data-testid="tune-heatmap"] [data-x][data-y]')
      .evaluateAll((nodes) => nodes.map((n) => [Number(n.getAttribute('data-x')), Number(n.getAttribute('data-y'))]));
    expect(cells.length).toBeGreaterThan(0);
    for (const [zeta, wnRadPerSec] of cells) expect(outsideKnobRanges({ zeta, wnRadPerSec })).toBeNull();
    expect(Math.max(...cells.map(([zeta]) => zeta))).toBe(DESK_KNOB_RANGES.zeta.max);
    // the top-right cell applies, and the knobs stay inside their ranges
    const from = await version();
    await app.page
      .locator(`[data-testid="tune-heatmap"] [data-x="${DESK_KNOB_RANGES.zeta.max}"][data-y]`)
      .first()
      .click();
    await waitUntil('the knobs to change', async () => (await version()) > from);
    const gate = (await app.backend.handle('knobs.get', {})).gate;
    expect(gate.zeta).toBe(DESK_KNOB_RANGES.zeta.max);
    expect(outsideKnobRanges(gate)).toBeNull();
    expect(await app.page.getByTestId('tune-error').count()).toBe(0);
  }, 120_000);
});
