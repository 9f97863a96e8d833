/**
 * The desktop app end to end without the Electron binary: the real renderer in Debian's Chromium,
 * the real preload and the real main process (with the real backend) in this process against the
 * fake 'electron'. Playwright stands in for Electron's IPC between the page and the preload: the
 * page's window.knobBridge forwards each call to the preload's bridge through a binding, and what
 * the preload receives (events, shell commands) is handed back to the page. The page is served by
 * the shell's own app protocol handler. Shown: the desk comes up over the bridge; File > Export
 * Bundle writes a bundle through the save dialog; a trace and a bundle dropped on the window open
 * by their kind; File > Open Model goes through the native dialog to the page, which loads the
 * model; the crash notice shows in the page.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IPC_SHELL_READY_CHANNEL, type KnobBridge, type ShellCommand } from '../../src-shared/api/bridge';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../support/browser-mode';
import { fakeElectron, ipcRenderer, type FakeBrowserWindow } from '../support/fake-electron';
import { classMeanWeights, linearClassifier } from '../support/onnx-builder';
import { fashionMnistSample } from '../support/fashion-mnist';

const APP_URL = 'http://knob.app.test/index.html';
const work = mkdtempSync(join(tmpdir(), 'knob-desktop-'));
let browser: Browser;
let page: Page;
let shellWindow: FakeBrowserWindow;
let bridge: KnobBridge;
const pageErrors: string[] = [];

/**
 * The page's side of the stand-in IPC: window.knobBridge as the preload exposes it, each call
 * forwarded to the test process; events and shell commands delivered by __knobDeliver. Dropped
 * files' paths come from __droppedPaths (Electron's webUtils reads them from the File).
 */
const PAGE_BRIDGE = `
(() => {
  const events = new Set();
  const commands = new Set();
  window.__droppedPaths = {};
  window.__knobDeliver = (kind, messages) => {
    for (const message of messages) for (const listener of kind === 'event' ? events : commands) listener(message);
  };
  window.knobBridge = {
    request: (message) => window.__knobIpc('request', message),
    cancel: (message) => void window.__knobIpc('cancel', message),
    onEvent: (listener) => (events.add(listener), () => events.delete(listener)),
    onShellCommand: (listener) => {
      commands.add(listener);
      void window.__knobIpc('onShellCommand', null);
      return () => commands.delete(listener);
    },
    sendFrame: (packet) => void window.__knobIpc('sendFrame', Array.from(packet)),
    openFileDialog: (purpose) => window.__knobIpc('openFileDialog', purpose),
    pathForFile: (file) => window.__droppedPaths[file.name] ?? '',
  };
})();
`;

/**
 * Hands what the preload receives to the page in order, in batches (a playing stream sends many
 * events). Electron's IPC keeps a window's messages in order, so an answer never overtakes the
 * events sent before it: `delivered()` resolves once everything received so far is in the page,
 * and each answer waits for it.
 */
let deliveries: Promise<void> = Promise.resolve();
const pending: Array<['event' | 'command', unknown]> = [];
function deliver(kind: 'event' | 'command', message: unknown): void {
  pending.push([kind, message]);
  if (pending.length > 1) return;
  deliveries = deliveries.then(async () => {
    const batch = pending.splice(0);
    await page
      .evaluate((messages) => {
        const target = window as unknown as { __knobDeliver(kind: string, messages: unknown[]): void };
        for (const [kind, message] of messages) target.__knobDeliver(kind, [message]);
      }, batch)
      .catch(() => undefined);
  });
}
const delivered = (): Promise<void> => deliveries;

const text = (id: string) => page.getByTestId(id).innerText();
const until = async (what: string, probe: () => Promise<boolean>, timeoutMs = 30_000) => {
  const started = Date.now();
  while (!(await probe().catch(() => false))) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};
const menuClick = (path: string[]) => {
  let items = (fakeElectron.state.applicationMenu as { items: Array<Record<string, unknown>> }).items;
  let item: Record<string, unknown> | undefined;
  for (const label of path) {
    item = items.find((i) => i.label === label);
    items = (item?.submenu ?? []) as Array<Record<string, unknown>>;
  }
  (item!.click as () => void)();
};

beforeAll(async () => {
  process.argv = [process.execPath, '.'];
  await import('../../src-main/electron/main');
  fakeElectron.launch();
  shellWindow = await fakeElectron.until(() => fakeElectron.state.windows[0], 'the main window');
  bridge = (
    await fakeElectron.loadPage<KnobBridge>(shellWindow, () => import('../../src-main/preload/index.ts?page=1'))
  ).api;

  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  // the page, as the shell's knob://app protocol serves it
  await context.route('http://knob.app.test/**', async (route) => {
    const url = new URL(route.request().url());
    const response = await fakeElectron.fetch(`knob://app${url.pathname}`);
    await route.fulfill({
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: Buffer.from(await response.arrayBuffer()),
    });
  });
  const deliverCommand = (command: ShellCommand) => deliver('command', command);
  bridge.onEvent((event) => deliver('event', event));
  let listening = false;
  await context.exposeBinding('__knobIpc', async (_source, call: string, argument: unknown) => {
    switch (call) {
      case 'request': {
        const response = await bridge.request(argument as never);
        await delivered();
        return response;
      }
      case 'cancel':
        return bridge.cancel(argument as never);
      case 'openFileDialog':
        return bridge.openFileDialog(argument as never);
      case 'sendFrame':
        return bridge.sendFrame(Uint8Array.from(argument as number[]));
      case 'onShellCommand':
        // a page listening again after a reload says so again, as the preload's onShellCommand does
        if (listening) ipcRenderer.send(IPC_SHELL_READY_CHANNEL);
        else bridge.onShellCommand(deliverCommand);
        listening = true;
        return null;
    }
    throw new Error(`unknown bridge call ${call}`);
  });
  await context.addInitScript(PAGE_BRIDGE);
  page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(APP_URL);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  const { app } = await import('../support/fake-electron');
  app.emit('will-quit');
});

describe('the desktop app: real renderer, preload and main, the IPC stood in for', () => {
  it('the desk comes up over the bridge with the default model and the embedded stream', async () => {
    await until('the default model', async () => (await text('model-name')) === 'knob-fmnist.onnx');
    await until('the embedded stream', async () => /embedded Fashion-MNIST/.test(await text('source-name')));
    // the renderer took the bridge, not a socket: no token was given, so a socket would have failed
    expect(await page.evaluate(() => location.search)).toBe('');
    expect(pageErrors).toEqual([]);
  });

  it('File > Export Bundle: the save dialog, and the page writes the bundle there', async () => {
    // enough frames for the report's equal-mass bins
    await until('60 frames', async () => Number(await text('frames-processed')) >= 60);
    const bundle = join(work, 'menu.knob.zip');
    fakeElectron.state.dialogAnswers.push(bundle);
    menuClick(['&File', 'Export Bundle…']);
    await until('the bundle', async () => existsSync(bundle) && (await page.getByTestId('export-result').isVisible()));
  });

  it('a trace and a bundle dropped on the window open by their kind', async () => {
    const trace = join(work, 'kept.arrow');
    await page
      .getByTestId('pause')
      .click()
      .catch(() => undefined);
    const response = await bridge.request({ id: 9001, method: 'trace.save', params: { path: trace } } as never);
    expect(response, JSON.stringify(response)).toMatchObject({ ok: true });
    const saved = (response as { result: { frameCount: number } }).result;
    const drop = (name: string, path: string) =>
      page.evaluate(
        ([n, p]) => {
          (window as unknown as { __droppedPaths: Record<string, string> }).__droppedPaths[n] = p;
          const data = new DataTransfer();
          data.items.add(new File(['x'], n));
          document
            .querySelector('main')!
            .dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
        },
        [name, path] as const,
      );
    await drop('kept.arrow', trace);
    // a recording not saved since would be discarded: the page asks first
    const dialog = page.getByTestId('confirm-dialog');
    if (await dialog.isVisible().catch(() => false)) await page.getByTestId('confirm-accept').click();
    const recording = async () =>
      (
        (await bridge.request({ id: Date.now(), method: 'session.get', params: {} } as never)) as {
          result: { recording: { origin: string; path: string | null; frameCount: number } | null };
        }
      ).result.recording;
    await until('the trace as the recording', async () => (await recording())?.origin === 'loaded');
    expect(await recording()).toMatchObject({ origin: 'loaded', path: trace, frameCount: saved.frameCount });
    await drop('menu.knob.zip', join(work, 'menu.knob.zip'));
    await until('the import report', () => page.getByTestId('import-result').isVisible());
    expect(await text('import-result')).toMatch(/SHA-256|verified|sound/i);
    expect(pageErrors).toEqual([]);
  });

  it('File > Open Model: the native dialog, then the page loads it as its own Load would', async () => {
    const sample = fashionMnistSample(200);
    const model = join(work, 'class-means.onnx');
    writeFileSync(model, linearClassifier(classMeanWeights(sample.images, sample.labels, 10, 4)));
    fakeElectron.state.dialogAnswers.push(model);
    menuClick(['&File', 'Open Model…']);
    // the loaded trace is saved work: the model loads without a question (one would be answered)
    await until('the new model', async () => {
      if (await page.getByTestId('confirm-dialog').isVisible()) await page.getByTestId('confirm-accept').click();
      return (await text('model-name')) === 'class-means.onnx';
    });
  });

  it('a crash notice from the shell shows in the page', async () => {
    shellWindow.webContents.emit('render-process-gone', {}, { reason: 'oom', exitCode: 1 });
    // the stand-in page did not really crash: it listens again as a reloaded page would
    await fakeElectron.until(() => shellWindow.webContents.reloads === 1, 'the reload');
    await page.evaluate(() =>
      (window as unknown as { knobBridge: KnobBridge }).knobBridge.onShellCommand(() => undefined),
    );
    await until('the notice', async () =>
      /The window stopped \(oom\) and was reloaded/.test(await text('shell-notice')),
    );
  });
});
