/**
 * Drift alarms live (issue 30), through the real backend and the shipped model: the embedded stream
 * plays (shot noise at severity 4 from frame 1500), pauses; a drift monitor of what is recorded so
 * far is armed on the frames recorded from then on (`field.watchLive`); play resumes. The alarms
 * come with the stream's updates, the saved trace keeps them, and they are the alarms the same
 * detectors and thresholds raise stepped offline over the same recorded frames (one DriftWatch
 * for both, stepped on the watch's own thread). A watch needs a monitor at the knobs now, and a frame
 * at other knobs stops it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { ApiEventData } from '../../src-shared/api/contract';
import {
  DEFAULT_FRAME_SIGNALS,
  DriftWatch,
  frameSignalScratch,
  frameSignalsAt,
  type DriftAlarm,
} from '../../src-shared/drift';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { sliceTrace } from '../../src-shared/trace/trace-slice';
import { calibratedMonitor } from '../support/calibrated-monitor';

const dir = mkdtempSync(join(tmpdir(), 'knob-field-live-'));
const backend = new KnobBackend();
const carried: Array<NonNullable<ApiEventData<'stream.update'>['driftAlarms']>[number]> = [];
backend.subscribe((event, data) => {
  if (event === 'stream.update') carried.push(...((data as ApiEventData<'stream.update'>).driftAlarms ?? []));
});
afterAll(async () => {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
});

const frames = (): number => backend.session.describe().recording?.frameCount ?? 0;

/**
 * Offline, what the watch armed at `fromFrame` must have raised over a saved trace: the same
 * monitor of the frames recorded when it was armed (its thresholds), the same detectors stepped
 * over the recorded frames from there on, on the recorded gate.
 */
async function offlineAlarms(
  file: Awaited<ReturnType<typeof readTraceFile>>,
  fromFrame: number,
  reference: { start: number; end: number },
): Promise<DriftAlarm[]> {
  const { trace } = file;
  const { plan, calibrations } = await calibratedMonitor(
    sliceTrace(trace, 0, fromFrame, 'view'),
    DEFAULT_GATE_SETTINGS,
    DEFAULT_FRAME_SIGNALS,
    reference,
    1,
    0,
  );
  const watch = DriftWatch.arm(plan, calibrations, [...DEFAULT_FRAME_SIGNALS]);
  const values = new Float64Array(DEFAULT_FRAME_SIGNALS.length);
  const scratch = frameSignalScratch(trace.classCount);
  const expected: DriftAlarm[] = [];
  for (let i = fromFrame; i < trace.frameCount; i++) {
    frameSignalsAt(trace, i, i, file.run!.output.g[i]!, DEFAULT_FRAME_SIGNALS, values, scratch);
    watch.step(i, values, (alarm) => expected.push(alarm));
  }
  return expected;
}

async function playUntil(count: number): Promise<void> {
  await backend.handle('stream.start', {});
  const deadline = performance.now() + 120_000;
  while (frames() < count) {
    if (performance.now() > deadline) throw new Error(`timed out at ${frames()} frames waiting for ${count}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  await backend.handle('stream.stop', {});
}

describe('a drift watch on the live stream', () => {
  it('raises the alarms the same detectors raise offline on the recorded frames; the trace keeps them', async () => {
    await backend.handle('model.load', { path: 'default', executionProviders: ['cpu'] });
    await backend.handle('source.open', {
      kind: 'embedded',
      schedule: {
        kind: 'step',
        corruption: 'shot_noise',
        levels: [
          { atFrame: 0, severity: 0 },
          { atFrame: 1500, severity: 4 },
        ],
      },
    });
    await backend.handle('stream.playback', { speed: 16 });
    await expect(backend.handle('field.watchLive', { on: true })).rejects.toMatchObject({ code: 'NOT_AVAILABLE' });
    await playUntil(800);
    const reference = { start: 0, end: 600 };
    await backend.handle('field.monitor', { reference });
    const armed = await backend.handle('field.watchLive', { on: true });
    const fromFrame = armed.fromFrame!;
    expect(armed).toMatchObject({ watching: true, alarmCount: 0, stoppedBecause: null });
    expect(fromFrame).toBe(frames());
    // the watch steps its detectors on a thread of its own, never on the backend's event loop
    const steppedHere = vi.spyOn(DriftWatch.prototype, 'step');
    await playUntil(2600);
    const watched = await backend.handle('field.watchLive', { on: false });
    expect(steppedHere).not.toHaveBeenCalled();
    steppedHere.mockRestore();
    expect(watched.stoppedBecause).toBe('stopped by the operator');
    const path = join(dir, 'watched.arrow');
    await backend.handle('trace.save', { path });

    const file = await readTraceFile(path);
    const expected = await offlineAlarms(file, fromFrame, reference);
    const kept = (file.context.driftWatch as { alarms: DriftAlarm[]; fromFrame: number; alarmCount: number }) ?? null;
    expect(kept).not.toBeNull();
    expect(kept.fromFrame).toBe(fromFrame);
    const key = (a: { frame: number; signal: string; detector: string }) => `${a.frame} ${a.signal} ${a.detector}`;
    expect(expected.length).toBeGreaterThan(0);
    expect(expected[0]!.frame).toBeGreaterThanOrEqual(1500);
    expect(kept.alarms.map(key)).toEqual(expected.map(key));
    expect(kept.alarmCount).toBe(watched.alarmCount);
    expect(carried.map(key)).toEqual(expected.map(key));
    for (const alarm of carried) expect(alarm.seconds).toBe(file.trace.timestampsSeconds[alarm.frame]);
  }, 240_000);

  it('needs a monitor at the knobs now, and a frame at other knobs stops the watch', async () => {
    await backend.handle('field.monitor', { reference: { start: 0, end: 600 } });
    await backend.handle('field.watchLive', { on: true });
    await backend.handle('knobs.set', { gate: { zeta: 0.5 } });
    await expect(backend.handle('field.watchLive', { on: true })).rejects.toMatchObject({
      code: 'NOT_AVAILABLE',
      message: expect.stringMatching(/at the knobs now/),
    });
    const before = frames();
    await playUntil(before + 30);
    const state = await backend.handle('field.watchLive', { on: false });
    expect(state.watching).toBe(false);
    expect(state.stoppedBecause).toBe(`the knobs moved (frame ${before})`);
  }, 120_000);

  it("arming again keeps the earlier watch's alarms: the stream carried them, the saved trace keeps them", async () => {
    await backend.handle('field.monitor', { reference: { start: 0, end: 600 } });
    carried.length = 0;
    const first = await backend.handle('field.watchLive', { on: true });
    await playUntil(frames() + 600);
    const second = await backend.handle('field.watchLive', { on: true });
    await playUntil(frames() + 300);
    const last = await backend.handle('field.watchLive', { on: false });
    const path = join(dir, 'armed-twice.arrow');
    await backend.handle('trace.save', { path });
    const kept = (await readTraceFile(path)).context.driftWatch as {
      fromFrame: number;
      alarmCount: number;
      earlier: { fromFrame: number; alarmCount: number; stoppedBecause: string } | null;
    };
    expect(kept.fromFrame).toBe(second.fromFrame);
    expect(kept.earlier).toMatchObject({ fromFrame: first.fromFrame, stoppedBecause: 'armed again' });
    expect(kept.earlier!.alarmCount).toBeGreaterThan(0);
    expect(kept.alarmCount).toBe(last.alarmCount);
    // the alarms of the last frames ride on the paused stream's trailing update (about 33 ms on)
    const deadline = performance.now() + 10_000;
    while (carried.length < kept.earlier!.alarmCount + kept.alarmCount && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(carried.length).toBe(kept.earlier!.alarmCount + kept.alarmCount);
  }, 120_000);

  it('a trace saved while the stream plays keeps the alarms of the frames it holds; a new recording ends the watch', async () => {
    const reference = { start: 0, end: 600 };
    await backend.handle('field.monitor', { reference });
    const armed = await backend.handle('field.watchLive', { on: true });
    const fromFrame = armed.fromFrame!;
    await backend.handle('stream.start', {});
    const deadline = performance.now() + 120_000;
    while (frames() < fromFrame + 400 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const path = join(dir, 'saved-while-playing.arrow');
    await backend.handle('trace.save', { path });
    await backend.handle('stream.stop', {});
    const file = await readTraceFile(path);
    const kept = file.context.driftWatch as { alarms: DriftAlarm[]; steppedThrough: number; alarmCount: number };
    expect(kept.steppedThrough).toBe(file.trace.frameCount);
    const expected = await offlineAlarms(file, fromFrame, reference);
    const key = (a: DriftAlarm) => `${a.frame} ${a.signal} ${a.detector}`;
    expect(expected.length).toBeGreaterThan(0);
    expect(kept.alarms.map(key)).toEqual(expected.map(key));
    expect(kept.alarmCount).toBe(expected.length);

    // another source replaces the recording: its watch stops and its thread ends
    const live = backend.session.requireRecording().driftWatch!;
    await backend.handle('source.open', { kind: 'embedded', discard: true });
    await live.settled();
    expect(live.state()).toMatchObject({ watching: false, stoppedBecause: 'the recording was replaced' });
    expect(live.threadEnded).toBe(true);
  }, 240_000);
});
