/**
 * The thin slice through every layer: Svelte renderer in Debian's Chromium -> WebSocket host ->
 * core backend -> src-shared gate. Turning a knob (keyboard and mouse) changes the backend's
 * settings, the readouts and the chart.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrowserMode, type BrowserMode } from '../support/browser-mode';

let app: BrowserMode;

beforeAll(async () => {
  app = await startBrowserMode();
  await app.page.getByTestId('settings-version').waitFor();
});
afterAll(async () => app?.close());

const chartPixels = (): Promise<string> => app.page.locator('[data-testid="gate-preview"] canvas').evaluate((canvas: HTMLCanvasElement) => canvas.toDataURL());
const readout = (name: string): Promise<string | null> => app.page.locator(`[data-readout="${name}"]`).textContent();

describe('knob slice in browser mode', () => {
  it('opens on the defaults with the analytic readouts of zeta 0.7, wn 6 rad/s at 30 fps', async () => {
    const zeta = app.page.getByRole('slider', { name: /Stability/ });
    const wn = app.page.getByRole('slider', { name: /Sensitivity/ });
    await expect.poll(() => zeta.getAttribute('aria-valuenow')).toBe('0.7');
    expect(await wn.getAttribute('aria-valuenow')).toBe('6');
    expect(await readout('overshoot-continuous')).toBe('4.60 %');
    expect(await readout('rise-continuous')).toBe('0.354 s');
    expect(await readout('settling-continuous')).toBe('0.996 s');
    expect(await readout('bandwidth-continuous')).toBe('0.963 Hz');
    // discrete, app convention: rise 11 frames, settling 29 frames, same overshoot as python-control
    expect(await readout('rise-discrete')).toBe('0.367 s');
    expect(await readout('settling-discrete')).toBe('0.967 s');
    expect(await readout('overshoot-discrete')).toBe('4.60 %');
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
    const bodeBefore = await app.page.locator('[data-testid="bode-chart"] canvas').evaluate((canvas: HTMLCanvasElement) => canvas.toDataURL());
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
    await expect.poll(() => app.page.locator('[data-testid="bode-chart"] canvas').evaluate((canvas: HTMLCanvasElement) => canvas.toDataURL())).not.toBe(bodeBefore);
    await app.screenshot('knob-slice-mouse');
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
