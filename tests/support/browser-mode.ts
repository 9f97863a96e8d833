import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { RecentRunsStore } from '../../src-main/core/recent-runs/recent-runs-store';
import { startWebHost, type WebHost } from '../../src-main/host/web-host';

/** Under vitest (a test), not a benchmark: the browser it drives, and whether a file shares one. */
const UNDER_VITEST = process.env.VITEST !== undefined;

/**
 * Under vitest, Debian's Chromium headless shell where it is installed (`chromium-headless-shell`,
 * the same Blink and V8 without the desktop browser's shell; what Playwright itself runs for
 * headless tests): the end-to-end files took a quarter less CPU than with the full browser (249 ->
 * 184 s, issue 28). The benchmarks drive the full browser, as Electron's window is one, so their
 * figures compare with earlier runs; so do the tests where the shell is absent.
 */
const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell';
export const CHROMIUM_PATH =
  process.env.KNOB_CHROMIUM ?? (UNDER_VITEST && existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : '/usr/bin/chromium');
export const SCREENSHOT_DIR = resolve('test-output/e2e');

/**
 * Flags for Debian's Chromium in a closed sandbox: no background networking (the machine's network
 * refuses it), no GPU, and --no-sandbox because CI runs as root.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/**
 * Under vitest, one Chromium per test file and set of flags, launched on first use and closed after
 * the file's last test: starting and ending Chromium took about four seconds of every end-to-end
 * test. Each desk still gets a context of its own (its own storage, cookies and pages) and its own
 * backend. A file closes its browsers by this module's afterAll where the project isolates its files
 * (this module is then evaluated per file), and by close-browsers-after-file.ts, a setup file, where
 * the files of a worker share this module (the integration project). A browser that fails to
 * launch or crashes is forgotten, so the next desk launches another. Outside vitest (the desk
 * benchmark) each desk launches and closes its own.
 */
const SHARED = UNDER_VITEST;
const browsers = new Map<string, Promise<Browser>>();

function sharedBrowser(args: string[]): Promise<Browser> {
  const key = JSON.stringify(args);
  let browser = browsers.get(key);
  if (browser === undefined) {
    const launched = chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args }).then(
      (opened) => {
        opened.on('disconnected', () => {
          if (browsers.get(key) === launched) browsers.delete(key);
        });
        return opened;
      },
      (error: unknown) => {
        browsers.delete(key);
        throw error;
      },
    );
    browser = launched;
    browsers.set(key, browser);
  }
  return browser;
}

/** Closes the browsers this module launched (vitest: after a test file). */
export async function closeSharedBrowsers(): Promise<void> {
  const open = [...browsers.values()];
  browsers.clear();
  await Promise.all(open.map(async (browser) => (await browser.catch(() => null))?.close()));
}
if (SHARED) afterAll(closeSharedBrowsers);

export interface BrowserMode {
  backend: KnobBackend;
  host: WebHost;
  /** Under vitest the file's shared Chromium: `close()` closes the context only. */
  browser: Browser;
  context: BrowserContext;
  page: Page;
  pageErrors: string[];
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * The real core behind the real WebSocket host, and the built renderer in Debian's Chromium. With
 * `recentRunsFolder`, the backend keeps recent runs there (as the app does in its data folder).
 */
export async function startBrowserMode(
  extraArgs: string[] = [],
  rendererDir = resolve('out/renderer'),
  recentRunsFolder: string | null = null,
): Promise<BrowserMode> {
  const recentRuns = recentRunsFolder === null ? null : await RecentRunsStore.open(recentRunsFolder);
  const backend = new KnobBackend({ recentRuns });
  const host = await startWebHost({ backend, rendererDir });
  const args = [...CHROMIUM_ARGS, ...extraArgs];
  const browser = SHARED
    ? await sharedBrowser(args)
    : await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args });
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  await page.goto(host.url);
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return {
    backend,
    host,
    browser,
    context,
    page,
    pageErrors,
    async screenshot(name) {
      const path = resolve(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    async close() {
      await (SHARED ? context.close() : browser.close());
      await host.close();
      await backend.close();
    },
  };
}
