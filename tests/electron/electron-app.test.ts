/**
 * The same slice through Electron: preload bridge, IPC, sandboxed renderer. Runs where the
 * Electron binary is present; elsewhere each test is skipped with the reason (the build machines
 * cannot download the binary).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { _electron as electron, type ElectronApplication, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { KNOB_BRIDGE_FUNCTIONS } from '../../src-shared/api/bridge';
import { electronBinary } from '../support/electron-binary';

const binary = electronBinary();
let app: ElectronApplication | null = null;
let window: Page;

function requireElectron(context: TestContext): void {
  if ('reason' in binary) context.skip(`Electron test skipped: ${binary.reason}`);
}

beforeAll(async () => {
  if ('reason' in binary) {
    process.stdout.write(`tests/electron skipped: ${binary.reason}\n`);
    return;
  }
  app = await electron.launch({ executablePath: binary.path, args: [resolve('out/main/index.js')] });
  window = await app.firstWindow();
});
afterAll(async () => app?.close());

describe('Electron shell', () => {
  it('opens one sandboxed, context-isolated window on the defaults', async (context) => {
    requireElectron(context);
    expect(await app!.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows().length)).toBe(1);
    // No Node in the page, and the bridge exposes exactly the preload's functions (KnobBridge).
    const page = await window.evaluate(() => ({
      require: typeof (globalThis as { require?: unknown }).require,
      process: typeof (globalThis as { process?: unknown }).process,
      bridge: Object.keys((globalThis as { knobBridge?: object }).knobBridge ?? {}).sort(),
    }));
    expect(page).toEqual({ require: 'undefined', process: 'undefined', bridge: [...KNOB_BRIDGE_FUNCTIONS].sort() });
    await expect
      .poll(() => window.getByRole('slider', { name: /Stability/ }).getAttribute('aria-valuenow'))
      .toBe('0.7');
  });

  it('turns a knob through IPC and the readouts follow', async (context) => {
    requireElectron(context);
    const zeta = window.getByRole('slider', { name: /Stability/ });
    await zeta.focus();
    for (let i = 0; i < 10; i++) await window.keyboard.press('ArrowUp');
    await expect.poll(() => zeta.getAttribute('aria-valuenow')).toBe('0.8');
    await expect.poll(() => window.locator('[data-readout="overshoot-continuous"]').textContent()).toBe('1.52 %');
    await window.screenshot({ path: resolve('test-output/electron/knob-slice.png') });
  });

  it('grants the camera and refuses the microphone and other permissions', async (context) => {
    requireElectron(context);
    const decisions = await window.evaluate(async () => {
      const query = async (name: string) => (await navigator.permissions.query({ name: name as PermissionName })).state;
      return {
        camera: await query('camera'),
        microphone: await query('microphone'),
        geolocation: await query('geolocation'),
      };
    });
    expect(decisions.microphone).not.toBe('granted');
    expect(decisions.geolocation).not.toBe('granted');
  });

  it('the page is the app protocol, and plays the default stream', async (context) => {
    requireElectron(context);
    expect(window.url()).toBe('knob://app/index.html');
    await expect
      .poll(() => window.getByTestId('model-name').textContent(), { timeout: 20_000 })
      .toBe('knob-fmnist.onnx');
    await expect
      .poll(() => window.getByTestId('source-name').textContent(), { timeout: 20_000 })
      .toMatch(/embedded Fashion-MNIST/);
    if (await window.getByTestId('play').isVisible()) await window.getByTestId('play').click();
    await expect
      .poll(async () => Number(await window.getByTestId('frames-processed').textContent()), { timeout: 20_000 })
      .toBeGreaterThan(60);
  });

  it('File > Export Bundle writes a bundle through the save dialog', async (context) => {
    requireElectron(context);
    const bundle = resolve('test-output/electron/menu.knob.zip');
    // the native dialog answered in the main process, then the real menu item clicked
    await app!.evaluate(({ dialog, Menu }, path) => {
      dialog.showSaveDialog = (async () => ({ canceled: false, filePath: path })) as typeof dialog.showSaveDialog;
      const file = Menu.getApplicationMenu()!.items.find((item) => item.label === '&File' || item.label === 'File')!;
      file.submenu!.items.find((item) => item.label === 'Export Bundle…')!.click();
    }, bundle);
    await expect.poll(() => window.getByTestId('export-result').isVisible(), { timeout: 20_000 }).toBe(true);
    expect(existsSync(bundle)).toBe(true);
  });
});
