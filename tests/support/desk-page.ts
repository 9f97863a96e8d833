import { expect } from 'vitest';
import { startBrowserMode, type BrowserMode } from './browser-mode';

/**
 * The desk in browser mode, started and settled: the default model loaded and the embedded stream
 * opened by the app itself (so a test's own source.open cannot race the start-up one).
 */
export async function startDesk(extraArgs: string[] = []): Promise<BrowserMode> {
  const app = await startBrowserMode(extraArgs);
  await app.page.getByTestId('model-name').waitFor();
  await app.page
    .getByText(/embedded Fashion-MNIST test set/)
    .first()
    .waitFor({ timeout: 20000 });
  return app;
}

export function testIdText(app: BrowserMode, id: string): Promise<string> {
  return app.page.getByTestId(id).innerText();
}

/** Clicks "Open source" and waits until the backend answered (the source generation moved on). */
export async function openSourceAndWait(app: BrowserMode): Promise<void> {
  const generation = async (): Promise<number> =>
    Number(await app.page.getByTestId('source-name').getAttribute('data-generation'));
  const before = await generation();
  await app.page.getByTestId('open-source').click();
  await expect.poll(generation, { timeout: 20000 }).toBeGreaterThan(before);
}
