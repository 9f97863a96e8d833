/**
 * Issue 17 in the desk (Debian's Chromium, browser mode, the real core and the shipped model):
 * the Probes tab offers the open file source as well as the embedded set, runs a step probe
 * through the model and shows the measured and predicted curves
 * with the discrete predictions of the knobs, and replays it (no model) when a knob turns, and a
 * frequency probe's magnitudes over the discrete theory; the
 * Tune tab tunes the recording by replay, a Pareto point applies with one click, the knobs and the
 * calibration figures change, and Undo restores both; the Analyses tab shows the paper's analyses of
 * the recording.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discreteResponseMetrics } from '../../src-shared/gate/response-metrics';
import type { BrowserMode } from '../support/browser-mode';
import { openSourceAndWait, recordFrames, startDesk, testIdText } from '../support/desk-page';
import { expectTableExported } from '../support/table-export-check';
import { formatNumber } from '../../src-renderer/lib/format';

let app: BrowserMode;

beforeEach(async () => {
  app = await startDesk();
});
afterEach(async () => app?.close());

const text = (id: string): Promise<string> => testIdText(app, id);
const knobs = async () => (await app.backend.handle('knobs.get', {})).gate;
const predictedOvershoot = async () =>
  discreteResponseMetrics(await knobs(), 1 / 30, 'app').overshootPercent.toFixed(3);

describe('Measure panel', () => {
  it('runs a step probe: measured and predicted curves, replayed at new knobs without the model', async () => {
    await app.page.getByTestId('tab-probes').click();
    // the desk opened a file source (the embedded set), so the probes may record over it too
    const overOpen = app.page.getByTestId('probe-over').locator('option[value="open-source"]');
    expect(await overOpen.isDisabled()).toBe(false);
    expect(await overOpen.textContent()).toMatch(/the open source \(30 fps\)/);
    await app.page.getByTestId('probe-realisations').fill('4');
    await app.page.getByTestId('probe-run').click();
    await expect.poll(() => app.page.getByTestId('probe-facts').isVisible(), { timeout: 60000 }).toBe(true);
    expect(await text('probe-facts')).toMatch(
      /shot noise 1 → 5 → 1, 4 realisations of 900 frames at 30 fps.*recorded in/,
    );
    const figure = app.page.getByTestId('step-probe-figure');
    const svg = await figure.locator('svg').first().innerHTML();
    expect(svg).toContain('measured mean (R = 4)');
    expect(svg).toContain('discrete prediction');
    expect(svg).toContain('simultaneous bootstrap band');
    // the predictions are the knobs' own discrete figures
    expect(await text('probe-predicted-overshoot')).toBe(await predictedOvershoot());
    expect(await text('probe-identified')).toMatch(/Identified from the recorded \(u\*, g\): ζ \d/);
    // saved as CSV and JSON at full precision: the predictions round to what the table shows
    const probe = await expectTableExported(app, 'step-probe', 'probe-table');
    const overshoot = probe.rows.find((r) => String(r['figure']).startsWith('overshoot'))!;
    expect(formatNumber(overshoot['discrete'] as number)).toBe(await text('probe-predicted-overshoot'));
    await app.screenshot('measure-step-probe');

    // a knob change replays the recording at the new knobs: new predictions, no model pass
    const before = await text('probe-predicted-overshoot');
    await app.backend.handle('knobs.set', { gate: { zeta: 0.3 } });
    await expect.poll(() => text('probe-predicted-overshoot'), { timeout: 20000 }).not.toBe(before);
    expect(await text('probe-predicted-overshoot')).toBe(await predictedOvershoot());
    await expect.poll(() => text('probe-facts')).toMatch(/; replayed at the knobs in \d+ ms/);

    // the frequency probe: measured magnitudes over the discrete theory, a row per frequency
    await app.page.getByTestId('probe-frequencies').fill('3');
    await app.page.getByTestId('probe-bode-run').click();
    await expect.poll(() => app.page.getByTestId('bode-facts').isVisible(), { timeout: 60000 }).toBe(true);
    expect(await text('bode-facts')).toMatch(/shot noise severity 3 ± 2, 3 frequencies at 30 fps/);
    expect(await app.page.getByTestId('bode-table').locator('tbody tr').count()).toBe(3);
    const frequencies = await expectTableExported(app, 'frequency-probe', 'bode-table');
    expect(frequencies.columns).toContain('measured dB (standard error)');
    const bode = await app.page.getByTestId('bode-probe-figure').locator('svg').first().innerHTML();
    expect(bode).toContain('discrete theory (zoh)');
    expect(bode).toContain('measured (lock-in)');

    // over the open source: another stream, so a new recording (the same stream would replay)
    await app.page.getByTestId('probe-over').selectOption('open-source');
    await app.page.getByTestId('probe-run').click();
    await expect.poll(() => text('probe-facts'), { timeout: 60000 }).toMatch(/at 30 fps over .*; recorded in/);
    // opening a source forgets the probe over the old one: a knob change must not record anew
    await openSourceAndWait(app);
    await expect.poll(() => app.page.getByTestId('probe-facts').count()).toBe(0);
    expect(await app.page.getByTestId('bode-facts').isVisible()).toBe(true); // over the embedded set: kept
    expect(app.pageErrors).toEqual([]);
  }, 120_000);

  it('tunes the recording, applies a Pareto point (knobs and metrics change), and Undo restores them', async () => {
    await app.page.getByTestId('speed').selectOption('4');
    await recordFrames(app, 400);
    await app.page.getByTestId('refresh-metrics').click();
    await expect.poll(() => app.page.getByTestId('metrics-facts').isVisible(), { timeout: 20000 }).toBe(true);
    const headline = () => app.page.locator('dl.headline').innerText();
    // the full snapshot of the whole recording: with its bootstrap intervals, not stale
    await expect.poll(headline, { timeout: 20000 }).toMatch(/\[\d/);
    await expect.poll(() => app.page.getByTestId('metrics-stale').count()).toBe(0);
    const metricsBefore = await headline();
    const knobsBefore = await knobs();

    await app.page.getByTestId('tab-tune').click();
    await app.page.getByTestId('tune-run').click();
    await expect.poll(() => app.page.getByTestId('tune-improvement').isVisible(), { timeout: 60000 }).toBe(true);
    expect(await text('tune-improvement')).toMatch(/95 % paired interval \[/);
    expect(await text('tune-facts')).toMatch(/\d+ settings in \d+\.\d\d s on \d thread/);
    expect(await app.page.getByTestId('tune-heatmap').innerHTML()).toContain('class="constraint-boundary"');
    const tuned = await expectTableExported(app, 'tune', 'tune-table');
    expect(tuned.columns).not.toContain('apply'); // the Apply buttons' column is left out
    expect(tuned.columns.slice(0, 2)).toEqual(['setting', 'knobs']);
    await app.screenshot('measure-tune');

    // a Pareto point, applied with one click
    const row = app.page.getByTestId('tune-row-pareto-0');
    const described = await row.locator('td.knobs').innerText();
    await app.page.getByTestId('tune-apply-pareto-0').click();
    await expect.poll(async () => (await knobs()).zeta, { timeout: 20000 }).not.toBe(knobsBefore.zeta);
    const applied = await knobs();
    expect(described).toContain(`ζ ${Number(applied.zeta.toPrecision(3))}`);
    expect(described).toContain(`ωn ${Number(applied.wnRadPerSec.toPrecision(3))} rad/s`);
    // the calibration figures follow (recomputed by replay while paused)
    await expect.poll(headline, { timeout: 20000 }).not.toBe(metricsBefore);

    // Undo: the knobs and the figures as they were
    await app.page.getByTestId('tune-undo').click();
    await expect.poll(async () => JSON.stringify(await knobs()), { timeout: 20000 }).toBe(JSON.stringify(knobsBefore));
    await expect.poll(headline, { timeout: 20000 }).toBe(metricsBefore);
    expect(await app.page.getByTestId('tune-undo').count()).toBe(0);

    // the paper's analyses of the same recording, by replay
    await app.page.getByTestId('tab-analyses').click();
    await app.page.getByTestId('analyses-run').click();
    await expect.poll(() => app.page.getByTestId('analyses-facts').isVisible(), { timeout: 30000 }).toBe(true);
    expect(await text('analyses-facts')).toMatch(/^\d+ frames \(\d+ labelled\)/);
    const lines = await text('analyses-lines');
    expect(lines).toMatch(/T_eff >= 1 on 100\.0 % of frames; 0 below 1/); // the shipped model's flat dynamic branch
    expect(lines).toMatch(/Spearman's rho with severity: -?\d\.\d{3}/);
    expect(lines).toMatch(/AUROC of u\* \d\.\d{3}/);
    expect(await app.page.getByTestId('analyses-severity').locator('tbody tr').count()).toBeGreaterThan(1);
    await expectTableExported(app, 'analyses-severity', 'analyses-severity');
    expect(app.pageErrors).toEqual([]);
  }, 120_000);
});
