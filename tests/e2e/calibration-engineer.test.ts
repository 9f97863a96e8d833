/**
 * Issue 32, deliverable 4, what a calibration engineer reaches for. Every table exportable as CSV
 * and JSON, at full precision: on a desk
 * with a recording, the calibration tables (every metric, by corruption), the calibrators
 * compared, the live top classes, the response figures, the hardware bindings, A/B and the recent runs
 * are saved through their buttons and held to the table on screen; each metric's exported value
 * is the backend's own number, not the rounded one shown. The probe, tune, analyses and field
 * tables are held the same way where their end-to-end tests fill them (measure, field-watch).
 * Reliability curves overlaid: A against B, before against after a calibrator, and recent runs.
 * Recent runs named, tagged and noted, and three compared against the first with their intervals.
 * The binning (count, equal width or equal mass, norm) chosen in the desk names the headline figure,
 * its interval, the diagrams and A/B. Conformal prediction sets: coverage and set size per group.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserMode } from '../support/browser-mode';
import { startDesk, testIdText, waitUntil } from '../support/desk-page';
import { expectTableExported } from '../support/table-export-check';
import { formatMetricValue } from '../../src-shared/metrics/metric-format';

let app: BrowserMode;

beforeAll(async () => {
  app = await startDesk([], undefined, {
    settle: false,
    recentRunsFolder: mkdtempSync(join(tmpdir(), 'knob-export-runs-')),
  });
  // the first start plays at once; at four times the source's rate the frames come sooner
  await app.page.getByTestId('speed').selectOption('4');
  await waitUntil('two hundred frames', async () => Number(await testIdText(app, 'frames-processed')) >= 200);
  await app.page.getByTestId('pause').click();
  await app.page.getByTestId('metrics-group').selectOption('corruption');
  await app.page.getByTestId('metrics-groups').waitFor({ timeout: 60_000 });
}, 180_000);

afterAll(async () => {
  await app?.close();
});

describe('tables saved as CSV and JSON', () => {
  it('every metric at the precision the backend computed it, and the metrics by corruption with their intervals', async () => {
    await app.page.getByText(/All metrics \(\d+\), each with its identity/).click();
    await app.page.getByTestId('metrics-table').waitFor();
    const metrics = await expectTableExported(app, 'metrics', 'metrics-table');
    expect(metrics.columns).toEqual(['value', 'identity']);
    const snapshot = await app.backend.handle('metrics.snapshot', { groupBy: 'corruption' });
    let compared = 0;
    for (const row of metrics.rows) {
      const own = snapshot.values.find((v) => v.identity === row['identity']);
      expect(own, String(row['identity'])).toBeDefined();
      if (own!.unavailable !== undefined || own!.value === null) continue;
      expect(row['value'], own!.identity).toBe(own!.value);
      compared++;
    }
    expect(compared).toBeGreaterThan(10);

    const groups = await expectTableExported(app, 'metrics-by-corruption', 'metrics-groups');
    expect(groups.columns).toContain('accuracy (low)');
    for (const row of groups.rows) {
      const [value, low, high] = [row['accuracy'], row['accuracy (low)'], row['accuracy (high)']];
      expect(typeof value).toBe('number');
      expect(low as number).toBeLessThanOrEqual(value as number);
      expect(high as number).toBeGreaterThanOrEqual(value as number);
    }
  });

  it('the calibrators compared, the top classes, the response figures, the bindings and A/B', async () => {
    const page = app.page;
    await page.getByTestId('calibrator-compare').click();
    await page.getByTestId('calibrator-table').waitFor({ timeout: 120_000 });
    const calibrators = await expectTableExported(app, 'calibrators', 'calibrator-table');
    expect(calibrators.columns).not.toContain('apply'); // the Apply buttons' column is left out
    expect(calibrators.columns[0]).toBe('method');
    expect(calibrators.columns.at(-1)).toBe('top-1 changed (fraction)');
    expect(calibrators.rows.length).toBeGreaterThan(1);

    const top = await expectTableExported(app, 'top-classes', 'live-top');
    const fused = top.rows.map((r) => r[top.columns[1]!] as number);
    expect(fused.every((p) => p > 0 && p <= 1)).toBe(true);

    const response = await expectTableExported(app, 'response', 'response-readouts');
    expect(response.rows.map((r) => r['figure'])).toEqual([
      'overshoot (%)',
      'rise 10–90 % (s)',
      'settling 2 % (s)',
      'bandwidth −3 dB (Hz)',
    ]);

    await page.getByTestId('hardware').locator('summary').click();
    const bindings = await expectTableExported(app, 'hardware-bindings', 'hardware-bindings');
    expect(bindings.columns).toEqual(['target', 'control', 'reads as']);
    expect(bindings.rows[0]).toEqual({ target: 'ζ stability', control: null, 'reads as': null });

    // A/B: the difference with its interval, as three columns
    await page.getByTestId('take-a').click();
    await page.getByRole('slider', { name: /Stability/ }).focus();
    await page.keyboard.press('PageUp');
    await page.getByTestId('take-b').click();
    await page.getByTestId('compare').click();
    await page.getByTestId('compare-table').waitFor({ timeout: 60_000 });
    const ab = await expectTableExported(app, 'compare-table', 'compare-table');
    expect(ab.columns).toEqual(['metric', 'A', 'B', 'B − A', 'B − A (low)', 'B − A (high)', 'verdict']);

    expect(app.pageErrors).toEqual([]);
  });

  it('overlays the reliability curves of A and B, and of the output before and after a calibrator', async () => {
    const page = app.page;
    const series = (figure: string) =>
      page
        .getByTestId(figure)
        .locator('svg g[data-series]')
        .evaluateAll((groups) =>
          groups.map((g) => ({ name: g.getAttribute('data-name'), points: Number(g.getAttribute('data-points')) })),
        );
    // A/B and the calibrators were compared by the test before
    const ab = await series('reliability-a-b-figure');
    expect(ab.map((s) => s.name)).toEqual(['A', 'B']);
    expect(ab.every((s) => s.points >= 3)).toBe(true);
    const calibrated = await series('reliability-calibrator-figure');
    expect(calibrated[0]!.name).toBe('uncalibrated');
    expect(calibrated.every((s) => s.points >= 3)).toBe(true);
    const options = await page.getByTestId('calibrator-overlay-method').locator('option').allInnerTexts();
    expect(options.length).toBeGreaterThan(1);
    await page.getByTestId('calibrator-overlay-method').selectOption({ label: options[1]! });
    await expect.poll(async () => (await series('reliability-calibrator-figure'))[1]!.name).toBe(options[1]);
    await page
      .getByTestId('reliability-calibrator-figure')
      .screenshot({ path: 'test-output/e2e/reliability-overlay-calibrator.png' });
    await page
      .getByTestId('reliability-a-b-figure')
      .screenshot({ path: 'test-output/e2e/reliability-overlay-a-b.png' });
    expect(app.pageErrors).toEqual([]);
  });

  it('bins as the operator chooses: count, scheme and norm name the headline figure, its interval and the diagrams', async () => {
    const page = app.page;
    const panel = page.locator('section.calibration');
    await page.getByTestId('binning-scheme').selectOption('equal-mass');
    await page.getByTestId('binning-norm').selectOption('max');
    await page.getByTestId('binning-bins').fill('20');
    await page.getByTestId('binning-bins').press('Enter');
    const chosen = await app.backend.handle('metrics.snapshot', {
      groupBy: 'corruption',
      binning: { scheme: 'equal-mass', bins: 20, norm: 'max' },
    });
    expect(chosen.binning.figureIdentity).toBe(
      'MCE(top-label, 20 equal-mass (midpoint edges) bins, (lo,hi] first closed, max)',
    );
    const figure = panel.locator(`dd[data-identity="${chosen.binning.figureIdentity}"]`);
    await figure.waitFor({ timeout: 60_000 });
    await expect.poll(() => panel.locator('dl.headline dt', { hasText: 'MCE (20 equal-mass bins)' }).count()).toBe(1);
    // the value as the backend computed it, and its own interval around it
    const value = chosen.values.find((v) => v.identity === chosen.binning.figureIdentity)!.value!;
    const interval = chosen.intervals.find((i) => i.identity === chosen.binning.figureIdentity)!;
    expect(interval.lo).toBeLessThanOrEqual(value);
    expect(interval.hi).toBeGreaterThanOrEqual(value);
    await expect.poll(() => figure.first().innerText()).toBe(formatMetricValue(chosen.binning.figureIdentity, value));
    // the diagram is drawn on the chosen bins and says so; the fixed 15-bin figures stay beside it
    await expect.poll(() => panel.getByText(/reliability\(top-label, 20 equal-mass/).count()).toBeGreaterThan(0);
    expect(await panel.locator('dd[data-identity^="ECE(top-label, 15 equal-width"]').count()).toBe(1);
    // A/B follows the binning: its figures are recomputed on the chosen bins, with the chosen figure's difference
    await expect
      .poll(() => page.getByTestId('compare-table').getByText('MCE', { exact: false }).count(), { timeout: 60_000 })
      .toBeGreaterThan(0);
    const ab = await expectTableExported(app, 'compare-table', 'compare-table');
    expect(ab.rows.some((r) => String(r['metric']).startsWith('MCE'))).toBe(true);

    // a count out of range is refused where it is typed, and the one in use kept
    await page.getByTestId('binning-bins').fill('0');
    await page.getByTestId('binning-bins').press('Enter');
    await expect.poll(() => testIdText(app, 'binning-invalid')).toContain('from 1 to 1000; 20 kept');
    expect(await page.getByTestId('binning-bins').inputValue()).toBe('20');
    await page.screenshot({ path: 'test-output/e2e/binning-choice.png' });

    // back to the default for the tests after this one
    await page.getByTestId('binning-scheme').selectOption('equal-width');
    await page.getByTestId('binning-norm').selectOption('L1');
    await page.getByTestId('binning-bins').fill('15');
    await page.getByTestId('binning-bins').press('Enter');
    await expect
      .poll(() => panel.locator('dl.headline dt', { hasText: 'ECE (15 equal-width bins)' }).count(), {
        timeout: 60_000,
      })
      .toBe(1);
    expect(app.pageErrors).toEqual([]);
  });

  it('conformal prediction sets: coverage with its interval and set size, overall and per corruption', async () => {
    const page = app.page;
    await page.getByTestId('conformal-group').selectOption('corruption');
    await page.getByTestId('conformal-compute').click();
    await page.getByTestId('conformal-table').waitFor({ timeout: 60_000 });
    const own = await app.backend.handle('conformal.sets', { alpha: 0.1, score: 'lac', groupBy: 'corruption' });
    expect(own.calibrationFrames + own.evaluatedFrames).toBeGreaterThanOrEqual(200);
    expect(own.groups.reduce((sum, g) => sum + g.frames, 0)).toBe(own.evaluatedFrames);
    expect(await testIdText(app, 'conformal-assumption')).toContain('exchangeable');
    const table = await expectTableExported(app, 'prediction-sets', 'conformal-table');
    expect(table.columns).toEqual([
      'group',
      'frames',
      'coverage',
      'coverage (low)',
      'coverage (high)',
      'mean set size',
      'empty sets (fraction)',
      'one class (fraction)',
    ]);
    const expected = [{ key: 'all evaluated frames', ...own.overall }, ...own.groups];
    expect(table.rows.map((r) => r['group'])).toEqual(expected.map((g) => g.key));
    table.rows.forEach((row, i) => {
      const want = expected[i]!;
      expect(row['coverage']).toBe(want.coverage);
      expect(row['mean set size']).toBe(want.meanSetSize);
      expect(row['coverage (low)'] as number).toBeLessThanOrEqual(want.coverage);
      expect(row['coverage (high)'] as number).toBeGreaterThanOrEqual(want.coverage);
      expect(want.meanSetSize).toBeGreaterThanOrEqual(0);
    });

    // APS: other sets on the same frames, said so
    await page.getByTestId('conformal-score').selectOption('aps');
    await page.getByTestId('conformal-compute').click();
    await expect.poll(() => testIdText(app, 'conformal-facts'), { timeout: 60_000 }).toMatch(/^APS, α = 0\.1/);
    // an α outside (0, 1) is refused where it is typed
    await page.getByTestId('conformal-alpha').fill('1.5');
    await page.getByTestId('conformal-alpha').press('Enter');
    await expect.poll(() => testIdText(app, 'conformal-invalid')).toContain('0.1 kept');
    await page.getByTestId('conformal-table').screenshot({ path: 'test-output/e2e/prediction-sets.png' });
    expect(app.pageErrors).toEqual([]);
  });

  it('the recent runs: named, tagged and noted (through a reload), three compared with intervals and overlaid curves', async () => {
    const page = app.page;
    /** Plays on for a while, pauses, and keeps the recording as a run. */
    const keepAnotherRun = async (count: number) => {
      await page.getByTestId('play').click();
      const from = Number(await testIdText(app, 'frames-processed'));
      await waitUntil(
        'frames of another run',
        async () => Number(await testIdText(app, 'frames-processed')) >= from + 150,
      );
      await page.getByTestId('pause').click();
      await waitUntil('the play button', () => page.getByTestId('play').isVisible());
      await page.getByTestId('new-recording').click();
      await waitUntil(
        `${count} kept runs`,
        async () => (await page.getByTestId('runs-table').locator('tbody tr').count()) >= count,
      );
    };
    await page.getByTestId('new-recording').click();
    await waitUntil('a kept run', async () => (await page.getByTestId('runs-table').locator('tbody tr').count()) >= 1);
    const first = (await page.getByTestId('runs-table').locator('tbody tr').first().getAttribute('data-run'))!;

    // a name, tags and notes, saved and shown; a bad tag is named and nothing is saved
    const row = page.locator(`tr[data-run="${first}"]`);
    await row.getByTestId('edit-run').click();
    await page.getByTestId('run-tags').fill('day, a,,b, day');
    await page.getByTestId('run-save').click();
    await expect.poll(() => testIdText(app, 'runs-error')).toMatch(/tags: a tag is given twice/);
    await page.getByTestId('run-name').fill('baseline at dawn');
    await page.getByTestId('run-tags').fill('day, camera 1');
    await page.getByTestId('run-notes').fill('first light; fog after frame 150');
    await page.getByTestId('run-save').click();
    await expect.poll(() => row.getByTestId('run-name-cell').innerText()).toContain('baseline at dawn');
    const runs = await expectTableExported(app, 'recent-runs', 'runs-table');
    expect(runs.columns).toEqual(['kept', 'name', 'tags', 'run', 'frames', 'labelled frames']);
    expect(runs.rows[0]).toMatchObject({ name: 'baseline at dawn', tags: 'day, camera 1' });
    expect(String(runs.rows[0]!['run'])).toMatch(/; .*ζ .*ωn .* rad\/s$/); // both lines of the cell, joined
    expect(runs.rows[0]!['frames'] as number).toBeGreaterThanOrEqual(200);
    // the backend keeps them: a reload of the page shows them again, and the filter finds the run by tag
    await page.reload();
    await page.getByTestId('runs-table').waitFor({ timeout: 60_000 });
    await expect
      .poll(() => page.locator(`tr[data-run="${first}"]`).getByTestId('run-name-cell').innerText())
      .toContain('baseline at dawn');
    expect((await app.backend.handle('runs.list', {})).runs.find((r) => r.id === first)).toMatchObject({
      name: 'baseline at dawn',
      tags: ['day', 'camera 1'],
      notes: 'first light; fog after frame 150',
    });

    // two more runs, the three compared with the first as the reference
    await keepAnotherRun(2);
    await keepAnotherRun(3);
    await page.getByTestId('runs-filter').fill('camera 1');
    await expect.poll(() => page.getByTestId('runs-table').locator('tbody tr').count()).toBe(1);
    await page.getByTestId('runs-filter').fill('');
    const ids = await page
      .getByTestId('runs-table')
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run')!));
    const order = [first, ...ids.filter((id) => id !== first).slice(0, 2)];
    for (const id of order) await page.locator(`tr[data-run="${id}"]`).getByTestId('choose-run').check();
    expect(await testIdText(app, 'runs-chosen')).toBe('3 chosen, reference baseline at dawn');
    await page.getByTestId('compare-runs').click();
    await page.getByTestId('runs-figures').waitFor({ timeout: 60_000 });
    const figures = await expectTableExported(app, 'runs-figures', 'runs-figures');
    expect(figures.rows.map((r) => r['run'])).toHaveLength(3);
    expect(figures.rows[0]!['run']).toBe('baseline at dawn (reference)');
    for (const r of figures.rows) {
      expect(r['accuracy (low)'] as number).toBeLessThanOrEqual(r['accuracy'] as number);
      expect(r['accuracy (high)'] as number).toBeGreaterThanOrEqual(r['accuracy'] as number);
    }
    const own = await app.backend.handle('runs.compare', { ids: order });
    expect(figures.rows.map((r) => r['ECE'])).toEqual(
      own.runs.map((side) => side.figures.find((f) => f.name === 'ECE')!.value),
    );
    for (const j of [1, 2]) {
      const against = await expectTableExported(app, `runs-comparison-${j}`, `runs-comparison-${j}`);
      expect(against.rows).toHaveLength(4);
    }
    // two runs against the reference: each figure's two intervals at 97.5 %, together at least 95 %
    for (const d of own.differences.flatMap((a) => a.differences)) expect(d.method).toMatch(/^97\.5 % .*Bonferroni/);
    const curves = await page
      .getByTestId('reliability-runs-figure')
      .locator('svg g[data-series]')
      .evaluateAll((groups) => groups.map((g) => g.getAttribute('data-name')));
    expect(curves).toHaveLength(3);
    expect(curves[0]).toBe('baseline at dawn');
    await page.getByTestId('reliability-runs-figure').screenshot({ path: 'test-output/e2e/runs-compared.png' });
    expect(app.pageErrors).toEqual([]);
  });
});
