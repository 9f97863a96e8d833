/**
 * A scripted walkthrough of the desk as a new user takes it, with a screenshot at each step under
 * test-output/walkthrough/ (the issue note says what each shows): start (the default stream playing
 * by itself), play on, step the schedule, turn a knob, calibration, A/B, export, re-import, reopen a
 * recent run, and the app started again bringing the last session back. Recent runs are kept in a
 * folder of the test's own, as the app keeps them in its data folder.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BrowserMode } from '../support/browser-mode';
import { startDesk, testIdText, waitUntil } from '../support/desk-page';

const SHOTS = resolve('test-output/walkthrough');
let app: BrowserMode | null = null;
afterEach(async () => app?.close());

describe('walkthrough', () => {
  it('start, play, step schedule, knob, calibration, A/B, export, re-import, recent run, restart', async () => {
    mkdirSync(SHOTS, { recursive: true });
    const folder = mkdtempSync(join(tmpdir(), 'knob-walkthrough-runs-'));
    let desk = await startDesk([], undefined, { settle: false, recentRunsFolder: folder });
    app = desk;
    const text = (id: string): Promise<string> => testIdText(desk, id);
    const recorded = async (): Promise<number> => Number(await text('frames-processed'));
    const shot = (name: string) => desk.page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

    // 1. Start: the default model and stream, playing under the step schedule the Source panel shows.
    await waitUntil('frames', async () => (await recorded()) > 10);
    await shot('01-start');

    // 2. Play on: past frame 150, where gaussian noise comes in, at 4x.
    await desk.page.getByTestId('speed').selectOption('4');
    await waitUntil('the noise step', async () => /gaussian_noise/.test(await text('live-corruption')), 30000);
    await shot('02-play');

    // 3. Step the schedule while it plays: fog at severity 4 from the next frame.
    await desk.page.getByTestId('schedule-kind').selectOption('constant');
    await desk.page.getByTestId('schedule-corruption').selectOption('fog');
    await desk.page.locator('label', { hasText: 'severity S' }).locator('input').fill('4');
    await waitUntil('fog on screen', async () => /fog, severity 4/.test(await text('live-corruption')));
    await shot('03-step-schedule');

    // 4. Turn the sensitivity knob with the keyboard (PageUp: coarse steps).
    const wn = desk.page.getByRole('slider', { name: /ωn|sensitivity/i });
    const before = (await desk.backend.handle('knobs.get', {})).gate.wnRadPerSec;
    await wn.focus();
    await desk.page.keyboard.press('PageUp');
    await desk.page.keyboard.press('PageUp');
    await expect
      .poll(async () => (await desk.backend.handle('knobs.get', {})).gate.wnRadPerSec)
      .toBeGreaterThan(before);
    await shot('04-knob');

    // 5. Pause; the calibration of everything recorded, replayed at the knobs.
    await desk.page.getByTestId('pause').click();
    await desk.page.getByTestId('refresh-metrics').click();
    await desk.page.getByTestId('reliability-figure').waitFor({ timeout: 20000 });
    await desk.page.getByTestId('metrics-group').selectOption('corruption');
    await desk.page.getByTestId('metrics-groups').waitFor({ timeout: 20000 });
    await shot('05-calibration');

    // 6. A/B: the knobs before and after a change, on the same frames.
    await desk.page.getByTestId('take-a').click();
    await desk.page.getByTestId('variant').selectOption('instant');
    await expect.poll(async () => (await desk.backend.handle('knobs.get', {})).gate.variant).toBe('instant');
    await desk.page.getByTestId('take-b').click();
    await desk.page.getByTestId('compare').click();
    // the table, or the panel's error at once by its text; on a loaded machine the two replays can
    // queue behind the calibration's intervals (a CI run once waited 20 s in vain, 2026-12-07)
    const compared = desk.page.locator('[data-testid="compare-table"], .compare [role="alert"]').first();
    await compared.waitFor({ timeout: 60000 });
    expect(await desk.page.locator('.compare [role="alert"]').allTextContents()).toEqual([]);
    await shot('06-ab');

    // 7. Export the tuned-calibrator bundle.
    const exported = join(mkdtempSync(join(tmpdir(), 'knob-walkthrough-export-')), 'walkthrough.knob.zip');
    await desk.page.getByTestId('export-path').fill(exported);
    await desk.page.getByTestId('export').click();
    await expect.poll(() => desk.page.getByTestId('export-result').isVisible(), { timeout: 20000 }).toBe(true);
    await shot('07-export');

    // 8. Re-import the bundle after turning the knobs elsewhere.
    await desk.backend.handle('knobs.set', { gate: { variant: 'second-order', zeta: 1.5 } });
    await desk.page.getByTestId('import-path').fill(exported);
    await desk.page.getByTestId('import').click();
    await expect.poll(() => text('import-result')).toMatch(/bundle sound/);
    expect((await desk.backend.handle('knobs.get', {})).gate.variant).toBe('instant');
    await shot('08-reimport');

    // 9. A second recording (kept, nothing asked), then the first one reopened from Recent runs.
    const firstRun = (await desk.backend.handle('runs.list', {})).runs[0];
    expect(firstRun.frameCount).toBe(await recorded());
    await desk.page.getByTestId('new-recording').click();
    await desk.page.getByTestId('play').click();
    await waitUntil('a second recording', async () => (await recorded()) > 40);
    await desk.page.getByTestId('pause').click();
    await waitUntil(
      'two runs listed',
      async () => (await desk.page.locator('[data-testid="runs-table"] tbody tr').count()) === 2,
    );
    await desk.page.locator(`tr[data-run="${firstRun.id}"]`).getByTestId('open-run').click();
    await waitUntil('the first run back', async () => (await recorded()) === firstRun.frameCount);
    const second = (await desk.backend.handle('runs.list', {})).runs.find((r) => r.id !== firstRun.id)!;
    for (const id of [firstRun.id, second.id])
      await desk.page.locator(`tr[data-run="${id}"]`).getByTestId('choose-run').check();
    await desk.page.getByTestId('compare-runs').click();
    await desk.page.getByTestId('runs-comparison-1').waitFor({ timeout: 20000 });
    await shot('09-recent-run');

    // 10. The app started again on the same data folder: the last session comes back, paused, with
    // its knobs, at the position its recording left off.
    await desk.page.getByTestId('seek').fill('2500');
    await desk.page.getByTestId('seek').dispatchEvent('change');
    const last = (await desk.backend.handle('runs.list', {})).runs[0];
    await desk.close();
    app = null;
    desk = await startDesk([], undefined, { recentRunsFolder: folder, expect: 'resume' });
    app = desk;
    const state = await desk.backend.handle('session.get', {});
    expect(state.state).toBe('paused');
    expect(state.recording!.frameCount).toBe(last.frameCount);
    expect(state.playback.position).toBe(last.position);
    expect(state.schedule).toEqual(last.schedule);
    expect((await desk.backend.handle('knobs.get', {})).gate).toEqual(last.settings);
    expect(await desk.page.getByTestId('play').isVisible()).toBe(true);
    await shot('10-restart-resumes');
    expect(desk.pageErrors).toEqual([]);
  });
});
