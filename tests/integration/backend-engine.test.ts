/**
 * The engine behind the typed API, driven over the browser-mode WebSocket host exactly as the
 * renderer drives it: load the shipped model, open the embedded stream, play it with live updates,
 * retune mid-stream, save and reload the trace, read the metrics snapshot; and a camera stream fed
 * binary frame packets.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { encodeFramePacket } from '../../src-shared/api/frame-packet';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { startWebHost, type WebHost } from '../../src-main/host/web-host';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { fashionMnistSample } from '../support/fashion-mnist';

interface Message {
  id?: unknown;
  ok?: boolean;
  result?: Record<string, unknown>;
  error?: { code: string; message: string };
  event?: string;
  data?: Record<string, unknown>;
}

const dir = mkdtempSync(join(tmpdir(), 'knob-backend-'));
let host: WebHost;
let backend: KnobBackend;
let ws: WebSocket;
const inbox: Message[] = [];
let nextId = 1;

beforeAll(async () => {
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
  backend = new KnobBackend();
  host = await startWebHost({ backend, rendererDir: dir });
  ws = new WebSocket(`ws://127.0.0.1:${host.port}/api?token=${encodeURIComponent(host.token)}`);
  await new Promise((resolve) => ws.once('open', resolve));
  ws.on('message', (data) => inbox.push(JSON.parse(data.toString()) as Message));
});
afterAll(async () => {
  ws.close();
  await backend.close();
  await host.close();
});

async function waitFor(predicate: (m: Message) => boolean, timeoutMs = 10000): Promise<Message> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const found = inbox.find(predicate);
    if (found) return found;
    if (performance.now() > deadline) throw new Error('timed out waiting for a message');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function call(method: string, params: unknown = {}): Promise<Message> {
  const id = nextId++;
  ws.send(JSON.stringify({ id, method, params }));
  return waitFor((m) => m.id === id, 30000);
}

describe('the engine through the API', () => {
  it('plays the embedded stream with the shipped model, applies knob changes between frames, saves and reloads the trace', async () => {
    const loaded = await call('model.load', { path: 'resources/models/knob-fmnist.onnx' });
    expect(loaded.ok).toBe(true);
    expect(loaded.result).toMatchObject({ contract: 'knob-native', executionProvider: 'cpu' });
    expect((await call('model.info')).result).toMatchObject({ classCount: 10 });
    const opened = await call('source.open', {
      kind: 'embedded',
      frameRateHz: 60,
      schedule: { kind: 'constant', corruption: 'fog', severity: 3 },
      seed: 5,
    });
    expect(opened.result).toMatchObject({ kind: 'embedded', frameCount: 10000, hasLabels: true, frameRateHz: 60 });
    expect((await call('stream.start')).result).toMatchObject({ state: 'playing' });
    const update = await waitFor((m) => m.event === 'stream.update' && (m.data!.framesProcessed as number) > 20);
    expect(update.data).toMatchObject({ settingsVersion: 0 });
    expect((update.data!.top as Array<{ label: string }>)[0].label.length).toBeGreaterThan(0);
    expect((await call('knobs.set', { gate: { zeta: 0.3 } })).result).toMatchObject({ version: 1 });
    await waitFor((m) => m.event === 'stream.update' && m.data!.settingsVersion === 1);
    const stopped = await call('stream.stop');
    expect(stopped.result).toMatchObject({ state: 'paused' });
    // Throttled: no more than ~30 updates a second reached the socket.
    const updates = inbox.filter((m) => m.event === 'stream.update');
    const span = (updates.at(-1)!.data!.timestampSeconds as number) - (updates[0].data!.timestampSeconds as number);
    expect(updates.length).toBeLessThanOrEqual(Math.ceil(span * 35) + 2);
    const path = join(dir, 'live.arrow');
    const saved = await call('trace.save', { path });
    expect(saved.result).toMatchObject({ path, classCount: 10 });
    const file = await readTraceFile(path);
    const versions = new Set(file.run!.output.settingsVersion);
    expect(versions).toEqual(new Set([0, 1]));
    const corruption = file.trace.metadata.corruption;
    expect(corruption.kind === 'category' && corruption.dictionary).toContain('fog');
    const snapshot = await call('metrics.snapshot');
    expect(
      (snapshot.result!.values as Array<{ identity: string }>).some((v) =>
        v.identity.startsWith('ECE(top-label, 15 equal-width'),
      ),
    ).toBe(true);
    // Full detail carries bootstrap intervals for the headline values (accuracy, NLL, Brier, ECE), the
    // debiased L2-CE's asymptotic and bootstrap ones, and the smooth curve; light leaves the resampling out.
    const intervals = snapshot.result!.intervals as Array<{ identity: string; method: string }>;
    expect(intervals).toHaveLength(6);
    expect(intervals.filter((i) => i.identity.includes('U-statistic')).map((i) => i.method)).toEqual([
      expect.stringMatching(/asymptotic interval \(Sun et al\. 2024\)/),
      expect.stringMatching(/bias-corrected basic bootstrap/),
    ]);
    expect(snapshot.result!.smooth).not.toBeNull();
    const light = await call('metrics.snapshot', { detail: 'light', groupBy: 'severity', lastFrames: 10 });
    expect(light.result).toMatchObject({
      intervals: [],
      smooth: null,
      window: 'last 10 recorded frames',
      groupBy: 'severity',
    });
    expect((light.result!.groups as Array<{ key: string; count: number }>).reduce((n, g) => n + g.count, 0)).toBe(
      light.result!.labelledFrameCount,
    );
    expect((await call('trace.load', { path })).result).toMatchObject({ frameCount: file.trace.frameCount });
    expect((await call('session.get')).result).toMatchObject({
      state: 'paused',
      recording: { origin: 'loaded', path },
    });
  });

  it('a camera stream takes binary frame packets of any size; malformed packets get a typed error', async () => {
    expect((await call('model.load', { path: 'default', discard: true })).ok).toBe(true);
    expect((await call('source.open', { kind: 'camera', frameRateHz: 30, discard: true })).result).toMatchObject({
      kind: 'camera',
      timestampSource: 'capture',
    });
    expect((await call('stream.start')).ok).toBe(true);
    const sample = fashionMnistSample(20);
    for (let i = 0; i < 20; i++) {
      // A 56 x 56 RGB capture of the image; the engine fits it to the model's 28 x 28 grey input.
      const pixels = new Uint8Array(56 * 56 * 3);
      for (let p = 0; p < 56 * 56; p++)
        pixels.fill(sample.images[i][((p / 56 / 2) | 0) * 28 + (((p % 56) / 2) | 0)], p * 3, p * 3 + 3);
      ws.send(
        encodeFramePacket({ width: 56, height: 56, channels: 3, timestampSeconds: 100 + i / 30, label: -1, pixels }),
      );
      await new Promise((r) => setTimeout(r, 35));
    }
    const update = await waitFor((m) => m.event === 'stream.update' && (m.data!.timestampSeconds as number) >= 100);
    expect(update.data!.label).toBeNull();
    ws.send(Uint8Array.of(1, 2, 3));
    const error = await waitFor((m) => m.event === 'frame.rejected');
    expect(error.data).toMatchObject({ code: 'BAD_REQUEST' });
    expect(error.data!.message).toMatch(/frame packet/);
    await call('stream.stop');
  });

  it('asks for a model before a source, and names the missing step', async () => {
    const fresh = new KnobBackend();
    await expect(fresh.handle('source.open', { kind: 'embedded' })).rejects.toThrow(/load a model first/);
    await expect(fresh.handle('stream.start', {})).rejects.toThrow(/load a model first/);
    await expect(fresh.handle('metrics.snapshot', {})).rejects.toThrow(/no recording yet/);
    await fresh.close();
  });
});
