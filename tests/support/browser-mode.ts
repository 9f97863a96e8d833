import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { RecentRunsStore } from '../../src-main/core/recent-runs/recent-runs-store';
import { startWebHost, type WebHost } from '../../src-main/host/web-host';

export const CHROMIUM_PATH = process.env.KNOB_CHROMIUM ?? '/usr/bin/chromium';
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
 * Under vitest, one Chromium per test worker and set of flags, launched on first use: starting and
 * ending Chromium took about four seconds of every end-to-end test. Each desk still gets a context
 * of its own (its own storage, cookies and pages) and its own backend. The integration project
 * shares this module among the files of a worker (isolate: false), so the browsers live until the
 * worker's process ends, where Playwright ends the browsers it launched; a project that isolates its
 * files starts a fresh worker for each. Outside vitest (the desk benchmark) each desk launches and closes
 * its own.
 */
const SHARED = process.env.VITEST !== undefined;
const browsers = new Map<string, Promise<Browser>>();

function sharedBrowser(args: string[]): Promise<Browser> {
  const key = JSON.stringify(args);
  let browser = browsers.get(key);
  if (browser === undefined) {
    browser = chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args });
    browsers.set(key, browser);
  }
  return browser;
}

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
