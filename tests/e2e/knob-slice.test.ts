/**
 * The thin slice through every layer: Svelte renderer in Debian's Chromium -> WebSocket host ->
 * core backend -> src-shared gate. Turning a knob (keyboard and mouse) changes the backend's
 * settings, the readouts and the chart.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startBrowserMode, type BrowserMode } from '../support/browser-mode';

let app: BrowserMode;

// Each test on a fresh desk and backend, from the default settings.
beforeEach(async () => {
  app = await startBrowserMode();
  await app.page.getByTestId('settings-version').waitFor();
});
afterEach(async () => app?.close());

const chartPixels = (): Promise<string> =>
  app.page.locator('[data-testid="gate-preview"] canvas').evaluate((canvas: HTMLCanvasElement) => canvas.toDataURL());
const readout = (name: string): Promise<string | null> => app.page.locator(`[data-readout="${name}"]`).textContent();

describe('knob slice in browser mode', () => {
  it('opens on the defaults with the analytic readouts of zeta 0.7, wn 6 rad/s at 30 fps', async () => {
    const zeta = app.page.getByRole('slider', { name: /Stability/ });
    const wn = app.page.getByRole('slider', { name: /Sensitivity/ });
    await expect.poll(() => zeta.getAttribute('aria-valuenow')).toBe('0.7');
    expect(await wn.getAttribute('aria-valuenow')).toBe('6');
    // The reference values, read from tests/fixtures/reference/dynamics.md and rounded as the panel prints them.
    const dynamics = readFileSync(resolve('tests', 'fixtures', 'reference', 'dynamics.md'), 'utf8');
    const number = (pattern: RegExp): number => Number(pattern.exec(dynamics)![1]);
    const overshoot = number(/overshoot ([\d.]+) %/);
    const rise = number(/10-90 % rise time ([\d.]+) s/);
    const settling = number(/2 % settling time\s+([\d.]+) s/);
    const bandwidthRadPerSec = number(/-3 dB bandwidth ([\d.]+) rad\/s/);
    const discreteRise = number(/RiseTime ([\d.]+)/);
    const discreteSettlingScipy = number(/SettlingTime ([\d.]+)/);
    expect(await readout('overshoot-continuous')).toBe(`${overshoot.toFixed(2)} %`);
    expect(await readout('rise-continuous')).toBe(`${rise.toFixed(3)} s`);
    expect(await readout('settling-continuous')).toBe(`${settling.toFixed(3)} s`);
    expect(await readout('bandwidth-continuous')).toBe(`${(bandwidthRadPerSec / (2 * Math.PI)).toFixed(3)} Hz`);
    // Discrete at 30 fps: python-control's step_info on the ZOH system (scipy convention); the app
    // fuses each frame with its own u*, so its settling reads one frame earlier, its rise the same.
    expect(await readout('rise-discrete')).toBe(`${discreteRise.toFixed(3)} s`);
    expect(await readout('settling-discrete')).toBe(`${(discreteSettlingScipy - 1 / 30).toFixed(3)} s`);
    expect(await readout('overshoot-discrete')).toBe(`${overshoot.toFixed(2)} %`);
    expect(app.pageErrors).toEqual([]);
    await app.screenshot('knob-slice-defaults');
  });

  it('turning zeta with the keyboard updates the backend, the readouts and the plot', async () => {
    const zeta = app.page.getByRole('slider', { name: /Stability/ });
    const before = await chartPixels();
    const versionBefore = (await app.backend.handle('knobs.get', {})).version;
    await zeta.focus();
    for (let i = 0; i < 10; i++) await app.page.keyboard.press('ArrowUp');
    await expect.poll(() => zeta.getAttribute('aria-valuenow')).toBe('0.8');
    await expect.poll(async () => (await app.backend.handle('knobs.get', {})).gate.zeta).toBe(0.8);
    expect((await app.backend.handle('knobs.get', {})).version).toBeGreaterThan(versionBefore);
    expect(await readout('overshoot-continuous')).toBe('1.52 %');
    expect(await chartPixels()).not.toBe(before);
    // Shift steps ten times finer; PageDown is coarse.
    await app.page.keyboard.press('Shift+ArrowDown');
    await expect.poll(() => zeta.getAttribute('aria-valuenow')).toBe('0.799');
    await app.page.keyboard.press('PageDown');
    await expect.poll(() => zeta.getAttribute('aria-valuenow')).toBe('0.699');
    await app.screenshot('knob-slice-keyboard');
  });

  it('dragging wn with the mouse (log scale) updates the backend, the step plot and the Bode plot', async () => {
    const wn = app.page.getByRole('slider', { name: /Sensitivity/ });
    const before = await chartPixels();
    const bodeBefore = await app.page
      .locator('[data-testid="bode-chart"] canvas')
      .evaluate((canvas: HTMLCanvasElement) => canvas.toDataURL());
    const box = (await wn.boundingBox())!;
    await app.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await app.page.mouse.down();
    await app.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2 - 40, { steps: 8 });
    await app.page.mouse.up();
    // 40 px of a 200 px sweep is 0.2 of three decades: a factor of 10^0.6 = 3.98
    await expect.poll(async () => (await app.backend.handle('knobs.get', {})).gate.wnRadPerSec).toBeGreaterThan(20);
    const wnNow = Number(await wn.getAttribute('aria-valuenow'));
    expect(wnNow).toBeGreaterThan(6 * 3.5);
    expect(wnNow).toBeLessThan(6 * 4.5);
    expect(await chartPixels()).not.toBe(before);
    await expect
      .poll(() =>
        app.page
          .locator('[data-testid="bode-chart"] canvas')
          .evaluate((canvas: HTMLCanvasElement) => canvas.toDataURL()),
      )
      .not.toBe(bodeBefore);
    await app.screenshot('knob-slice-mouse');
  });

  it('dragging zeta with the mouse changes the backend, the readouts and the step plot', async () => {
    const zeta = app.page.getByRole('slider', { name: /Stability/ });
    const before = await chartPixels();
    const overshootBefore = await readout('overshoot-continuous');
    const zetaBefore = Number(await zeta.getAttribute('aria-valuenow'));
    const box = (await zeta.boundingBox())!;
    await app.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await app.page.mouse.down();
    await app.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2 + 30, { steps: 6 });
    await app.page.mouse.up();
    // Down lowers the damping: 30 px of a 200 px sweep is 0.15 of [0.05, 3], about 0.44 lower.
    await expect.poll(async () => (await app.backend.handle('knobs.get', {})).gate.zeta).toBeLessThan(zetaBefore - 0.3);
    await expect.poll(() => readout('overshoot-continuous')).not.toBe(overshootBefore);
    expect(await chartPixels()).not.toBe(before);
    await app.screenshot('knob-slice-zeta-drag');
  });

  it('double-click types a value; an out-of-range entry is refused with a hint', async () => {
    const zeta = app.page.getByRole('slider', { name: /Stability/ });
    await zeta.dblclick();
    const entry = app.page.getByRole('textbox', { name: /Type Stability/ });
    await entry.fill('9');
    await entry.press('Enter');
    await expect.poll(() => app.page.getByRole('alert').first().textContent()).toContain('to');
    await entry.fill('1.5');
    await entry.press('Enter');
    await expect.poll(async () => (await app.backend.handle('knobs.get', {})).gate.zeta).toBe(1.5);
    expect(await readout('overshoot-continuous')).toBe('0.00 %');
    const path = await app.screenshot('knob-slice-typed');
    expect(existsSync(path)).toBe(true);
    expect(app.pageErrors).toEqual([]);
  });
});
