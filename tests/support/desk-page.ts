import { startBrowserMode, type BrowserMode } from './browser-mode';

/**
 * The desk in browser mode, and the steps tests and benchmarks take on it. Plain polling, no test
 * framework: the desk benchmark uses these outside vitest.
 */
export async function waitUntil(what: string, predicate: () => Promise<boolean>, timeoutMs = 20000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await predicate())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface DeskStart {
  /** Leave the first start playing (default: pause it and discard its recording). */
  settle?: boolean;
  /** Keep recent runs in this folder (the app's data folder). */
  recentRunsFolder?: string;
  /** 'resume': the folder holds a last session, which the desk brings back paused. */
  expect?: 'first-start' | 'resume';
}

/**
 * Started as a first-time user finds it: the default model loaded, the embedded stream opened and
 * playing by itself. Settled (the default), it is then paused and its recording discarded, so a
 * test starts from a paused desk with nothing recorded; unsettled, it is left playing. Expecting a
 * resume, it returns once the last session's recording is back.
 */
export async function startDesk(
  extraArgs: string[] = [],
  rendererDir?: string,
  options: DeskStart = {},
): Promise<BrowserMode> {
  const app = await startBrowserMode(extraArgs, rendererDir, options.recentRunsFolder ?? null);
  await settleFirstStart(app, options);
  return app;
}

/** The first start of a desk already open in `app.page` (startDesk's steps, for a desk started elsewhere). */
export async function settleFirstStart(app: DeskPage, options: DeskStart = {}): Promise<void> {
  await app.page.getByTestId('model-name').waitFor();
  await app.page
    .getByText(/embedded Fashion-MNIST test set/)
    .first()
    .waitFor({ timeout: 20000 });
  if (options.expect === 'resume') {
    await waitUntil('the last session back', async () => Number(await testIdText(app, 'frames-processed')) > 0);
    return;
  }
  await waitUntil('the desk to start playing by itself', () => app.page.getByTestId('pause').isVisible());
  if (options.settle === false) return;
  await waitUntil('the first frames', async () => Number(await testIdText(app, 'frames-processed')) > 0);
  await app.page.getByTestId('pause').click();
  await waitUntil('the play button', () => app.page.getByTestId('play').isVisible());
  await app.page.getByTestId('new-recording').click();
  // With recent runs the recording is kept, so there is nothing to confirm.
  if (options.recentRunsFolder === undefined) await answerConfirmation(app, 'accept');
  await waitUntil('an empty recording', async () => Number(await testIdText(app, 'frames-processed')) === 0);
}

/** What the steps below need of a desk: its page. */
export type DeskPage = Pick<BrowserMode, 'page'>;

export function testIdText(app: DeskPage, id: string): Promise<string> {
  return app.page.getByTestId(id).innerText();
}

/** Clicks "Open source" and waits until the backend answered (the source generation moved on). */
export async function openSourceAndWait(app: DeskPage, answerDiscard?: 'accept' | 'cancel'): Promise<void> {
  const generation = async (): Promise<number> =>
    Number(await app.page.getByTestId('source-name').getAttribute('data-generation'));
  const before = await generation();
  await app.page.getByTestId('open-source').click();
  if (answerDiscard !== undefined) await answerConfirmation(app, answerDiscard);
  await waitUntil('the source to open', async () => (await generation()) > before);
}

/** Answers the desk's question (a recording with unsaved work about to be discarded); returns its text. */
export async function answerConfirmation(app: DeskPage, answer: 'accept' | 'cancel'): Promise<string> {
  const dialog = app.page.getByTestId('confirm-dialog');
  await waitUntil('the question', () => dialog.isVisible());
  const message = await dialog.innerText();
  await app.page.getByTestId(answer === 'accept' ? 'confirm-accept' : 'confirm-cancel').click();
  await waitUntil('the question to close', async () => !(await dialog.isVisible()));
  return message;
}

/** Plays the open source until the recording holds at least `frames` frames, then pauses. */
export async function recordFrames(app: BrowserMode, frames: number): Promise<number> {
  const recorded = async (): Promise<number> => Number(await testIdText(app, 'frames-processed'));
  await app.page.getByTestId('play').click();
  await waitUntil(`${frames} recorded frames`, async () => (await recorded()) >= frames, 30000);
  await app.page.getByTestId('pause').click();
  await waitUntil('the play button', () => app.page.getByTestId('play').isVisible());
  return recorded();
}
