/**
 * The same slice through Electron: preload bridge, IPC, sandboxed renderer. Runs where the
 * Electron binary is present; elsewhere each test is skipped with the reason (the build machines
 * cannot download the binary).
 */
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
});
