/**
 * The camera path end to end: Chromium's fake capture device plays a generated .y4m file (a
 * Fashion-MNIST Trouser for 2 s, then a Bag for 2 s, looping); the desk grabs frames with
 * getUserMedia, downscales them in a Worker, sends them on the binary frame path to the real core,
 * and the model's predictions follow the known pattern.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedProvenanceOf } from '../../src-main/core/report/provenance';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import type { BrowserMode } from '../support/browser-mode';
import { openSourceAndWait, startDesk } from '../support/desk-page';
import { fashionMnistSample } from '../support/fashion-mnist';

const dir = mkdtempSync(join(tmpdir(), 'knob-camera-'));
const TROUSER = 1;
const BAG = 8;
const FPS = 15;
const SIDE = 112;

/** A 4:2:0 Y4M clip: each 28 x 28 image scaled 4x (nearest), neutral chroma. */
function writeY4m(path: string, images: Uint8Array[], framesEach: number): void {
  const header = Buffer.from(`YUV4MPEG2 W${SIDE} H${SIDE} F${FPS}:1 Ip A1:1 C420jpeg\n`);
  const frames: Buffer[] = [header];
  for (const image of images) {
    const luma = Buffer.alloc(SIDE * SIDE);
    for (let y = 0; y < SIDE; y++) for (let x = 0; x < SIDE; x++) luma[y * SIDE + x] = image[(y >> 2) * 28 + (x >> 2)];
    const chroma = Buffer.alloc((SIDE / 2) * (SIDE / 2) * 2, 128);
    for (let i = 0; i < framesEach; i++) frames.push(Buffer.from('FRAME\n'), luma, chroma);
  }
  writeFileSync(path, Buffer.concat(frames));
}

let app: BrowserMode;
const clip = join(dir, 'pattern.y4m');

beforeAll(async () => {
  const sample = fashionMnistSample(200);
  const trouser = sample.images[sample.labels.indexOf(TROUSER)];
  const bag = sample.images[sample.labels.indexOf(BAG)];
  writeY4m(clip, [trouser, bag], FPS * 2);
  app = await startDesk([
    '--use-fake-device-for-media-stream',
    '--use-fake-ui-for-media-stream',
    `--use-file-for-fake-video-capture=${clip}`,
  ]);
});
afterAll(async () => app?.close());

describe('camera through the fake capture device', () => {
  it('frames reach the model and its predictions follow the clip (Trouser, then Bag)', async () => {
    await app.page.getByTestId('source-kind').selectOption('camera');
    await app.page.getByTestId('schedule-kind').selectOption('none');
    await app.page.locator('label', { hasText: 'frame rate (Hz)' }).locator('input').fill(String(FPS));
    await openSourceAndWait(app);
    expect(await app.page.getByTestId('source-name').innerText()).toMatch(/camera/);
    await app.page.getByTestId('play').click();
    await expect
      .poll(async () => Number(await app.page.getByTestId('frames-processed').innerText()), { timeout: 30000 })
      .toBeGreaterThan(6 * FPS * 0.8);
    await app.screenshot('camera-playing');
    await app.page.getByTestId('pause').click();
    const path = join(dir, 'camera.arrow');
    await app.backend.handle('trace.save', { path });
    const file = await readTraceFile(path);
    // the recording names the device it came from: the fake device's label and the clip's resolution
    const identity = storedProvenanceOf(file.context)!.sourceIdentity;
    expect(identity).toMatchObject({ kind: 'camera', width: SIDE, height: SIDE });
    expect((identity as { deviceLabel: string }).deviceLabel.length).toBeGreaterThan(0);
    expect(await app.page.getByTestId('source-identity').innerText()).toMatch(
      new RegExp(`camera '.+' at ${SIDE} x ${SIDE}`),
    );
    const top1 = Array.from(file.run!.output.top1);
    const trousers = top1.filter((c) => c === TROUSER).length;
    const bags = top1.filter((c) => c === BAG).length;
    process.stdout.write(
      `camera: ${top1.length} frames reached the model; predicted Trouser ${trousers}, Bag ${bags}\n`,
    );
    expect(top1.length).toBeGreaterThan(60);
    // Both images were seen, each for a good share of the stream, in runs (the pattern, not noise).
    expect(trousers).toBeGreaterThan(top1.length * 0.25);
    expect(bags).toBeGreaterThan(top1.length * 0.25);
    let switches = 0;
    for (let i = 1; i < top1.length; i++) if (top1[i] !== top1[i - 1]) switches++;
    expect(switches).toBeLessThan(top1.length / 5);
    // Capture times come from the page clock: finite and strictly increasing (how far apart they are
    // depends on how busy the machine is, which a test does not assert).
    const t = file.trace.timestampsSeconds;
    const gaps = Array.from(t.subarray(1), (v, i) => v - t[i]);
    expect(gaps.every((gap) => Number.isFinite(gap) && gap > 0)).toBe(true);
  }, 60000);
});
