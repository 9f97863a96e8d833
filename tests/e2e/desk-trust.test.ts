/**
 * The traps a new user met on the desk (issue 13), each in Debian's Chromium through browser mode
 * with the real core: the first start plays the schedule the Source panel shows; an edited schedule
 * reaches the stream from its next frame and the trace records it per frame; speed applies at once
 * and a file source records every frame; colour corruptions are not offered on grayscale frames; a
 * calibration view that no longer matches the knobs says so and recomputes; figures have numeric
 * ticks, per-class views and save as SVG and PNG; the exported report opens cleanly in Chromium and
 * holds the same provenance rows as the CLI's.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { extractArchive } from '../../src-main/core/files/zip-archive';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { PROVENANCE_ROWS, storedProvenanceOf } from '../../src-main/core/report/provenance';
import { corruptionAt, parseCorruptionSchedule } from '../../src-shared/corruptions/schedule';
import { FIRST_START_SCHEDULE } from '../../src-renderer/lib/desk/first-start';
import type { BrowserMode } from '../support/browser-mode';
import { startDesk, testIdText, waitUntil } from '../support/desk-page';

let app: BrowserMode;
beforeEach(async () => {
  app = await startDesk();
});
afterEach(async () => app?.close());

const text = (id: string): Promise<string> => testIdText(app, id);
const recorded = async (): Promise<number> => Number(await text('frames-processed'));
const NUMERIC_TICKS = ['0.0', '0.2', '0.4', '0.6', '0.8', '1.0'];

/** The current recording as a trace file, read back by the same code as `knob replay`. */
async function savedTrace(name: string) {
  const path = join(mkdtempSync(join(tmpdir(), 'knob-trust-')), name);
  await app.backend.handle('trace.save', { path });
  return readTraceFile(path);
}

function corruptionNames(trace: Awaited<ReturnType<typeof readTraceFile>>['trace']): string[] {
  const column = trace.metadata.corruption;
  if (column?.kind !== 'category') throw new Error('the trace has no corruption column');
  return Array.from(column.codes, (code) => column.dictionary[code]);
}

const ECE_IDENTITY = 'ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)';

describe('the desk an operator can trust', () => {
  it('first start: plays the default stream under the schedule the Source panel shows, with a visible pause', async () => {
    await app.close();
    app = await startDesk([], undefined, { settle: false });
    expect(await app.page.getByTestId('pause').isVisible()).toBe(true);
    expect(await app.page.getByTestId('schedule-kind').inputValue()).toBe('step');
    expect(await app.page.getByTestId('schedule-corruption').inputValue()).toBe('gaussian_noise');
    expect(await text('schedule-status')).toMatch(/^in force/);
    const session = await app.backend.handle('session.get', {});
    expect(session.state).toBe('playing');
    expect(session.schedule).toMatchObject(FIRST_START_SCHEDULE);
    await app.screenshot('trust-first-start');
  });

  it('an edited schedule reaches the playing stream from its next frame, and the trace records it per frame', async () => {
    await app.page.getByTestId('play').click();
    await waitUntil('40 frames', async () => (await recorded()) > 40);
    const before = (await app.backend.handle('session.get', {})).recording!.frameCount;
    await app.page.getByTestId('schedule-kind').selectOption('constant');
    await app.page.getByTestId('schedule-corruption').selectOption('fog');
    await waitUntil('the edit in force', async () => {
      const schedule = (await app.backend.handle('session.get', {})).schedule;
      return schedule?.kind === 'constant' && schedule.corruption === 'fog';
    });
    await expect.poll(() => text('schedule-status')).toMatch(/^in force/);
    const applied = (await app.backend.handle('session.get', {})).recording!.frameCount;
    await waitUntil('30 more frames', async () => (await recorded()) > applied + 30);
    await app.page.getByTestId('pause').click();
    // paused once the frames in flight have landed (stream.stop waits for them): saved before
    // that, the trace would miss the last of them
    await waitUntil('paused', async () => (await app.backend.handle('session.get', {})).state === 'paused');
    const file = await savedTrace('edited.arrow');
    const { trace } = file;
    const names = corruptionNames(trace);
    const severity = trace.metadata.severity;
    if (severity?.kind !== 'number') throw new Error('the trace has no severity column');
    // The schedules in force, as the trace's provenance records them: the first-start step from the
    // first frame, fog last. Between the two selections the form holds "constant gaussian noise at
    // severity 3", which the desk applies as an edit of its own when the second selection comes
    // after its 400 ms debounce (a loaded machine); nothing else.
    const history = storedProvenanceOf(file.context)!.schedule!;
    expect(history[0]).toMatchObject({ fromFrame: 0, schedule: FIRST_START_SCHEDULE });
    const fog = history.at(-1)!;
    expect(fog.schedule).toMatchObject({ kind: 'constant', corruption: 'fog', severity: 3 });
    for (const between of history.slice(1, -1)) {
      expect(between.schedule).toMatchObject({ kind: 'constant', corruption: 'gaussian_noise', severity: 3 });
      expect(between.fromFrame).toBeGreaterThanOrEqual(before);
    }
    expect(history.length).toBeLessThanOrEqual(3);
    // The first fog frame is one the stream prepared after the edit: not before it was made, and
    // no later than the frame after those in flight when it applied.
    const edit = fog.fromFrame;
    expect(edit).toBeGreaterThanOrEqual(before);
    expect(edit).toBeLessThanOrEqual(applied + 2);
    expect(names.indexOf('fog')).toBe(edit);
    // every frame under the schedule in force at it: its corruption and severity
    for (let i = 0; i < trace.frameCount; i++) {
      const inForce = history.findLast((entry) => entry.fromFrame <= i)!;
      const expected = corruptionAt(parseCorruptionSchedule(inForce.schedule), i, inForce.seed);
      expect(names[i], `frame ${i}`).toBe(expected.corruption ?? 'none');
      expect(severity.values[i], `frame ${i}`).toBe(expected.severity);
    }
    // the frames in flight at the pause land after it: the desk's count catches up with its next update
    await expect.poll(recorded).toBe(trace.frameCount);
  });

  it('speed applies at once while playing, and a file source records every frame with its stream time', async () => {
    await app.page.getByTestId('play').click();
    await waitUntil('20 frames at 1x', async () => (await recorded()) > 20);
    const recordingId = (await app.backend.handle('session.get', {})).recording!.id;
    await app.page.getByTestId('speed').selectOption('4');
    await expect
      .poll(async () => {
        const state = await app.backend.handle('session.get', {});
        return [state.state, state.playback.speed, state.recording!.id];
      })
      .toEqual(['playing', 4, recordingId]);
    await waitUntil('300 frames', async () => (await recorded()) > 300, 40000);
    await app.page.getByTestId('pause').click();
    const { trace } = await savedTrace('speed.arrow');
    const sourceFrame = trace.metadata.source_frame;
    if (sourceFrame?.kind !== 'number') throw new Error('the trace has no source_frame column');
    // Every frame of the file from where play started, in order, none dropped; stream time moves
    // by the frame period with every frame, at 1x and at 4x alike.
    const first = sourceFrame.values[0];
    for (let i = 0; i < trace.frameCount; i++) {
      expect(sourceFrame.values[i], `frame ${i}`).toBe(first + i);
      expect(trace.timestampsSeconds[i] - trace.timestampsSeconds[0], `frame ${i}`).toBeCloseTo(i / 30, 9);
    }
    expect(await text('frames-dropped')).toBe('0');
  });

  it('colour corruptions are not offered on the grayscale stream (the reason on hover), and the core refuses them', async () => {
    const saturate = app.page.locator('[data-testid="schedule-corruption"] option[value="saturate"]');
    expect(await saturate.isDisabled()).toBe(true);
    expect(await saturate.getAttribute('title')).toMatch(/saturate .*colour.*grayscale/);
    await expect(
      app.backend.handle('source.configure', { schedule: { kind: 'constant', corruption: 'saturate', severity: 3 } }),
    ).rejects.toThrow(/saturate/);
  });

  it('a calibration view flags itself stale while the recording grows and recomputes after a knob change', async () => {
    await app.page.getByTestId('speed').selectOption('4');
    await app.page.getByTestId('play').click();
    await waitUntil('60 frames', async () => (await recorded()) > 60);
    await app.page.getByTestId('refresh-metrics').click();
    await expect.poll(() => app.page.getByTestId('metrics-facts').isVisible(), { timeout: 20000 }).toBe(true);
    // Playing on: the view says it describes fewer frames than are recorded.
    await expect
      .poll(() => text('metrics-stale'), { timeout: 20000 })
      .toMatch(/computed on \d+ frames, \d+ are recorded/);
    await app.page.getByTestId('pause').click();
    await expect.poll(() => app.page.getByTestId('metrics-stale').isVisible(), { timeout: 20000 }).toBe(false);
    expect(await text('metrics-facts')).toMatch(new RegExp(`of ${await recorded()} frames`));
    // A knob turned elsewhere (another window, the API): the view catches up with its version.
    const { version } = await app.backend.handle('knobs.set', { gate: { zeta: 1.3 } });
    await expect.poll(() => text('metrics-facts'), { timeout: 20000 }).toMatch(new RegExp(`settings v${version},`));
    expect(await app.page.getByTestId('metrics-stale').isVisible()).toBe(false);
  });

  it('the reliability diagram has numeric ticks, a per-class view, and saves as SVG and PNG', async () => {
    await app.page.getByTestId('speed').selectOption('4');
    await app.page.getByTestId('play').click();
    await waitUntil('120 frames', async () => (await recorded()) > 120);
    await app.page.getByTestId('pause').click();
    await app.page.getByTestId('refresh-metrics').click();
    const figure = app.page.getByTestId('reliability-figure');
    await figure.waitFor({ timeout: 20000 });
    expect(await figure.locator('text.x-tick').allTextContents()).toEqual(NUMERIC_TICKS);
    expect(await figure.locator('text.y-tick').allTextContents()).toEqual(NUMERIC_TICKS);
    expect(Number((await figure.locator('text.count-tick').allTextContents())[0])).toBeGreaterThan(0);
    const [svgDownload] = await Promise.all([
      app.page.waitForEvent('download'),
      app.page.getByTestId('reliability-svg').click(),
    ]);
    const svg = readFileSync(await svgDownload.path(), 'utf8');
    expect(svgDownload.suggestedFilename()).toBe('reliability.svg');
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect(svg).toContain('class="tick x-tick">0.2</text>');
    // Saved in the report's palette, not the theme's variables.
    expect(svg).not.toContain('var(--');
    const [pngDownload] = await Promise.all([
      app.page.waitForEvent('download'),
      app.page.getByTestId('reliability-png').click(),
    ]);
    const png = readFileSync(await pngDownload.path());
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    // One class at a time: p(Trouser) against how often the frame is a Trouser.
    await app.page.getByTestId('reliability-of').selectOption('1');
    const perClass = app.page.getByTestId('reliability-class-1-figure');
    await perClass.waitFor();
    expect(await perClass.locator('text.x-tick').allTextContents()).toEqual(NUMERIC_TICKS);
    expect(await perClass.innerText()).toMatch(/p\(Trouser\)/);
    await app.screenshot('trust-reliability-class');
    // TCE's own view: one box per PAVA-BC bin, rejected counts that add up to the TCE shown.
    await app.page.getByTestId('reliability-of').selectOption('tce');
    const tce = app.page.getByTestId('tce-figure');
    await tce.waitFor();
    const rejected = await tce
      .locator('rect.tce-rejected')
      .evaluateAll((rects) => rects.map((r) => Number(r.getAttribute('data-rejected'))));
    const sizes = await tce
      .locator('rect.tce-total')
      .evaluateAll((rects) => rects.map((r) => Number(r.getAttribute('data-count'))));
    const shown = Number((await tce.innerText()).match(/TCE ([\d.]+) %/)![1]);
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    expect(shown).toBeCloseTo((100 * sum(rejected)) / sum(sizes), 1);
    // The debiased L2-CE shows both of its intervals, each saying how it was made.
    const methods = await app.page
      .locator('dd.ci[data-method]')
      .evaluateAll((dds) => dds.map((d) => d.getAttribute('data-method')));
    expect(methods).toEqual(expect.arrayContaining(['asymptotic', 'bootstrap']));
    await app.screenshot('trust-tce-view');
  });

  it('the exported report opens in Chromium without errors and holds the same provenance rows as the CLI report', async () => {
    await app.page.getByTestId('speed').selectOption('4');
    await app.page.getByTestId('play').click();
    await waitUntil('60 frames', async () => (await recorded()) > 60);
    await app.page.getByTestId('pause').click();
    const deskBundle = join(mkdtempSync(join(tmpdir(), 'knob-desk-report-')), 'desk.knob.zip');
    await app.page.getByTestId('export-path').fill(deskBundle);
    await app.page.getByTestId('export').click();
    await expect.poll(() => app.page.getByTestId('export-result').isVisible(), { timeout: 30000 }).toBe(true);
    // the report as a user unpacks it from the bundle
    const unpacked = mkdtempSync(join(tmpdir(), 'knob-desk-unpacked-'));
    await extractArchive(readFileSync(deskBundle), deskBundle, unpacked);
    const deskDir = join(unpacked, 'report');
    const cliDir = mkdtempSync(join(tmpdir(), 'knob-cli-report-'));
    const cli = spawnSync(
      process.execPath,
      [resolve('bin/knob.mjs'), 'run', '--model', 'default', '--source', 'default', '--limit', '100', '--out', cliDir],
      { encoding: 'utf8' },
    );
    expect(cli.status, cli.stderr).toBe(0);
    const rowsOf = (dir: string): Record<string, string> =>
      (JSON.parse(readFileSync(join(dir, 'metrics.json'), 'utf8')) as { provenance: Record<string, string> })
        .provenance;
    const desk = rowsOf(deskDir);
    const command = rowsOf(cliDir);
    expect(Object.keys(desk)).toEqual([...PROVENANCE_ROWS]);
    expect(Object.keys(command)).toEqual([...PROVENANCE_ROWS]);
    for (const row of ['model', 'model SHA-256', 'contract', 'execution provider', 'made by'])
      expect(desk[row], row).toBe(command[row]);
    expect(desk['corruption schedule']).toBe(
      'gaussian noise in steps: severity 0 from frame 0, severity 3 from frame 150, severity 0 from frame 450',
    );
    expect(desk.trace).toMatch(/^live recording/);
    // Opened as a file in Chromium: no script, no error, no blocked resource; numeric ticks in its figures.
    const page = await app.page.context().newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
    });
    page.on('requestfailed', (request) => problems.push(`failed: ${request.url()}`));
    await page.goto(pathToFileURL(join(deskDir, 'report.html')).href);
    expect(await page.locator('table.provenance th').allTextContents()).toEqual([...PROVENANCE_ROWS]);
    const reliability = page.locator('svg[aria-label^="Reliability diagram"]');
    expect(await reliability.locator('text.x-tick').allTextContents()).toEqual(NUMERIC_TICKS);
    const gateTicks = await page.locator('svg[aria-label^="Gate g(t)"] text.x-tick').allTextContents();
    expect(gateTicks.length).toBeGreaterThanOrEqual(3);
    expect(gateTicks.every((t) => Number.isFinite(Number(t)))).toBe(true);
    await page.emulateMedia({ media: 'print' });
    await page.screenshot({ path: resolve('test-output/e2e/trust-report-print.png'), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('calibrators: fit temperature scaling, compare held out, apply it (the diagram and ECE change), switch it off', async () => {
    await app.page.getByTestId('speed').selectOption('4');
    await app.page.getByTestId('play').click();
    await waitUntil('300 frames', async () => (await recorded()) > 300, 30000);
    await app.page.getByTestId('pause').click();
    await app.page.getByTestId('refresh-metrics').click();
    const ece = app.page.locator(`dd[data-identity="${ECE_IDENTITY}"]`);
    await ece.waitFor({ timeout: 20000 });
    // The view of the whole recording, computed after the last frame landed.
    const frames = await recorded();
    await expect.poll(() => text('metrics-facts'), { timeout: 20000 }).toMatch(new RegExp(`of ${frames} frames`));
    await expect.poll(() => app.page.getByTestId('metrics-stale').isVisible()).toBe(false);
    const eceBefore = await ece.innerText();
    const eceBeforeValue = (await app.backend.handle('metrics.snapshot', { detail: 'light' })).values.find(
      (v) => v.identity === ECE_IDENTITY,
    )!.value!;
    expect(eceBefore).toBe(eceBeforeValue.toFixed(4));
    const diagram = () => app.page.getByTestId('reliability-figure').locator('svg').innerHTML();
    const diagramBefore = await diagram();
    expect(await text('metrics-facts')).toMatch(/uncalibrated/);
    for (const method of ['vector', 'platt', 'isotonic'])
      await app.page.getByTestId(`calibrator-method-${method}`).uncheck();
    await app.page.getByTestId('calibrator-compare').click();
    const table = app.page.getByTestId('calibrator-table');
    await table.waitFor({ timeout: 20000 });
    expect(await table.locator('tbody tr').count()).toBe(2);
    expect(await text('calibrator-facts')).toMatch(/time-ordered split/);
    await app.screenshot('trust-calibrators-compared');
    await app.page.getByTestId('calibrator-apply-temperature').click();
    await expect.poll(() => text('calibrator-status')).toMatch(/Output calibrated by temperature scaling, T = /);
    // The calibration view recomputes itself (a new settings version) with the calibrated output.
    await expect.poll(() => text('metrics-facts'), { timeout: 20000 }).toMatch(/calibrated by temperature scaling/);
    // At four decimals a fit on a few hundred frames can leave the shown ECE as it was (T near 1):
    // the backend's value moves, and the desk shows the backend's value.
    const eceNow = (await app.backend.handle('metrics.snapshot', { detail: 'light' })).values.find(
      (v) => v.identity === ECE_IDENTITY,
    )!.value!;
    expect(eceNow).not.toBe(eceBeforeValue);
    expect(await ece.innerText()).toBe(eceNow.toFixed(4));
    expect(await diagram()).not.toBe(diagramBefore);
    await app.screenshot('trust-calibrator-applied');
    await app.page.getByTestId('calibrator-off').click();
    await expect.poll(() => text('metrics-facts'), { timeout: 20000 }).toMatch(/uncalibrated/);
    expect(await ece.innerText()).toBe(eceBefore);
    // The figures come first and the smooth curve's bootstrap band after (desk.refreshStale).
    await expect.poll(diagram, { timeout: 20000 }).toBe(diagramBefore);
  });
});
