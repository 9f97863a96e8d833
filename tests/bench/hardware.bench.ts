/**
 * Issue 32: a hardware knob turn reaches the gate within one frame at 60 fps (16.7 ms). A desk in
 * Debian's Chromium, paused and then playing a 60 fps stream, with a MIDI encoder bound to zeta (the
 * injected Web MIDI of the tests: no device exists here); each turn is timed from the benchmark's
 * command to send the controller's bytes into the page until the backend's announcement of the new
 * knobs (its 'knobs.changed' event: the gate the stream runs with holds the turn) reaches the
 * benchmark. The backend runs in a process of its own, as the desktop app's does (host-process.ts:
 * the desk's WebSocket host), so the benchmark's own work (driving Chromium) does not queue beside
 * it; the announcement comes to the benchmark over a second connection. The command's trip into the
 * page (Chrome DevTools Protocol) and the announcement's trip out are inside the figure, so the turn
 * itself takes less; where the time goes is printed too (the page's clock and the benchmark's read
 * the same wall clock); the row that counts from the MIDI message in the page is what a device's
 * turn takes (its message arrives in the page, not through the command). Until 2026-12-06 a turn
 * ended when both the announcement and the command's own answer had come back, which put the
 * command's way back from the page into every figure (a p95 of 28.7 ms playing, now 10.5).
 */
import { resolve } from 'node:path';
import { fork } from 'node:child_process';
import { chromium, type Page } from 'playwright-core';
import WebSocket from 'ws';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../support/browser-mode';
import { INJECTED_WEB_MIDI, sendMidiScript } from '../support/injected-web-midi';
import { openSourceAndWait, settleFirstStart, waitUntil } from '../support/desk-page';
import { buildInto } from './bench-build';
import { row } from './bench-timing';

const BUILD_DIR = 'bench-output/build';
const TURNS = 120;
const FRAME_AT_60_FPS_MS = 1000 / 60;

/** Records in the page when it sends 'knobs.set' (wall clock), for the split of each turn. */
const SEND_TIMES = `(() => {
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (typeof data === 'string' && data.includes('"knobs.set"') && window.knobSetSentAt) window.knobSetSentAt.push(performance.timeOrigin + performance.now());
    return send.call(this, data);
  };
})()`;

interface Turns {
  /** Command to announcement, sorted (ms). */
  samples: number[];
  /** Each turn's parts: command to the page, the page to its send, the send to the announcement (ms). */
  parts: Array<[number, number, number]>;
}

/** Times TURNS turns of the bound encoder, each from the command to the backend's announcement. */
async function turnsToGate(page: Page, announcements: Announcements): Promise<Turns> {
  const samples: number[] = [];
  const parts: Array<[number, number, number]> = [];
  for (let turn = 0; turn < TURNS; turn++) {
    // up then down, so zeta stays inside its travel
    const value = turn % 40 < 20 ? 1 : 127;
    const announced = announcements.next();
    const started = performance.now();
    await page.evaluate(
      `window.knobSetSentAt = []; window.turnReceivedAt = performance.timeOrigin + performance.now(); ${sendMidiScript([0xb0, 21, value])}`,
    );
    // when the announcement arrived, which can be before the command's own answer comes back
    const ended = await announced;
    samples.push(ended - started);
    const [received, sent] = (await page.evaluate('[window.turnReceivedAt, window.knobSetSentAt[0] ?? NaN]')) as [
      number,
      number,
    ];
    const wall = (t: number) => performance.timeOrigin + t;
    parts.push([received - wall(started), sent - received, wall(ended) - sent]);
    await page.waitForTimeout(20);
  }
  return { samples: samples.sort((a, b) => a - b), parts };
}

interface Announcements {
  /** Resolves at the next 'knobs.changed' event, with the time it arrived (performance.now()). */
  next(): Promise<number>;
  close(): void;
}

/** The backend's 'knobs.changed' events, over a connection of the benchmark's own. */
async function announcementsOf(port: number, token: string): Promise<Announcements> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/api?token=${encodeURIComponent(token)}`);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  let waiting: ((arrivedAt: number) => void) | null = null;
  socket.on('message', (data) => {
    const arrivedAt = performance.now();
    if ((JSON.parse(data.toString()) as { event?: string }).event !== 'knobs.changed') return;
    waiting?.(arrivedAt);
    waiting = null;
  });
  return {
    next: () => new Promise<number>((resolve) => (waiting = resolve)),
    close: () => socket.close(),
  };
}

const percentile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

export async function runHardwareBench(): Promise<void> {
  process.stdout.write(
    `\n== hardware knobs: a MIDI encoder turn to the backend's gate, paused and with a 60 fps stream playing ==\n`,
  );
  buildInto(BUILD_DIR);
  const host = fork('tests/support/host-process.ts', [resolve(BUILD_DIR, 'renderer')], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { port, token, url } = await new Promise<{ port: number; token: string; url: string }>((done, fail) => {
    host.once('message', (message) => done(message as { port: number; token: string; url: string }));
    host.once('exit', (code) => fail(new Error(`the host process exited (${code}) before serving`)));
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
  const announcements = await announcementsOf(port, token);
  try {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    await context.addInitScript(INJECTED_WEB_MIDI);
    await context.addInitScript(SEND_TIMES);
    const page = await context.newPage();
    await page.goto(url);
    const app = { page };
    await settleFirstStart(app);
    await page.getByTestId('hardware').locator('summary').click();
    await page.getByTestId('hw-connect-midi').click();
    await page.getByTestId('hw-learn-zeta').click();
    await page.evaluate(sendMidiScript([0xb0, 21, 1]));
    await page.getByTestId('hw-encoding-zeta').selectOption('relative-twos-complement');
    await page.getByTestId('schedule-kind').selectOption('sine');
    await page.locator('label', { hasText: 'frame rate (Hz)' }).locator('input').fill('60');
    await openSourceAndWait(app);
    const idle = await turnsToGate(page, announcements);
    await page.getByTestId('play').click();
    await waitUntil('the stream to play', () => page.getByTestId('pause').isVisible());
    await page.waitForTimeout(1000);
    const playing = await turnsToGate(page, announcements);
    // the command's own trip into the page, at the same load: the part of each figure that is not the desk's
    const trips: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      const started = performance.now();
      await page.evaluate('0');
      trips.push(performance.now() - started);
    }
    trips.sort((a, b) => a - b);
    await page.getByTestId('pause').click();
    for (const [label, { samples, parts }] of [
      ['paused', idle],
      ['playing 60 fps', playing],
    ] as const) {
      const within = samples.filter((ms) => ms <= FRAME_AT_60_FPS_MS).length;
      row(
        `${label}: turn to gate, median / p95 / max (${TURNS} turns)`,
        `${percentile(samples, 0.5).toFixed(1)} / ${percentile(samples, 0.95).toFixed(1)} / ${samples.at(-1)!.toFixed(1)} ms`,
      );
      row(`${label}: within one frame at 60 fps (16.7 ms)`, `${within} of ${TURNS}`);
      // what a device's turn takes: its message arrives in the page itself, not through the command
      const device = parts.map((p) => p[1] + p[2]).sort((a, b) => a - b);
      row(
        `${label}: the page's MIDI message to the gate, median / p95 / max`,
        `${percentile(device, 0.5).toFixed(1)} / ${percentile(device, 0.95).toFixed(1)} / ${device.at(-1)!.toFixed(1)} ms`,
      );
      row(
        `${label}: of those, within one frame at 60 fps (target: all)`,
        `${device.filter((ms) => ms <= FRAME_AT_60_FPS_MS).length} of ${TURNS}`,
      );
      ['the command into the page', "the page's MIDI handling to its send", 'the send to the announcement'].forEach(
        (part, k) => {
          const sorted = parts.map((p) => p[k]!).sort((a, b) => a - b);
          row(
            `  ${part}, median / p95`,
            `${percentile(sorted, 0.5).toFixed(1)} / ${percentile(sorted, 0.95).toFixed(1)} ms`,
          );
        },
      );
    }
    row('the command into the page alone (playing), median', `${trips[trips.length >> 1]!.toFixed(1)} ms`);
  } finally {
    announcements.close();
    await browser.close();
    host.send('stop');
  }
}
