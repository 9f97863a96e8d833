/**
 * A live drift watch on its thread (live-drift-watch.ts, live-watch-worker.ts; issue 30: detectors
 * on the live path off the main thread), without a model: a synthetic recording with features,
 * every frame signal watched (the logits' confidence and disagreement, u*, the gate, the features'
 * shift and MMD, whose terms read the frame before a batch's first and the kernel's reference
 * frames sent once), both detectors. Frames are stepped as a live recording steps them, in runs
 * that end by the batch size, by the batch timer and by a settle; the thread's alarms are the ones
 * the same detectors raise stepped here over the offline monitor's signal values, bit for bit, and
 * nothing is stepped on this thread.
 */
import { describe, expect, it, vi } from 'vitest';
import { DriftWatch, FRAME_SIGNAL_NAMES, frameSignals, type DriftAlarm } from '../../src-shared/drift';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { normalDraw, seededRandom } from '../../src-shared/random';
import { replay } from '../../src-shared/trace/replay';
import { LiveDriftWatch, WATCH_BATCH_FRAMES, WATCH_BATCH_MS } from '../../src-main/core/recording/live-drift-watch';
import { calibratedMonitor } from '../support/calibrated-monitor';
import { syntheticTrace } from '../support/synthetic-trace';

const FRAMES = 6000;
const WIDTH = 6;
const SHIFT_AT = 3500;
const REFERENCE = { start: 0, end: 1500 };
const FROM_FRAME = 2000;
const SIGNALS = [...FRAME_SIGNAL_NAMES];

function recording() {
  const random = seededRandom(41);
  const values = new Float32Array(FRAMES * WIDTH);
  for (let i = 0; i < FRAMES; i++)
    for (let j = 0; j < WIDTH; j++) values[i * WIDTH + j] = normalDraw(random) + (i >= SHIFT_AT && j < 2 ? 0.7 : 0);
  return { ...syntheticTrace({ frames: FRAMES, classCount: 7, seed: 9 }), features: { width: WIDTH, values } };
}

const key = (a: DriftAlarm) => `${a.frame} ${a.signal} ${a.detector} ${a.statistic} ${a.threshold}`;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a live drift watch on its own thread', () => {
  it('raises, frame for frame, the alarms the same detectors raise here on the offline signals', async () => {
    const trace = recording();
    const settings = DEFAULT_GATE_SETTINGS;
    const { plan, calibrations } = await calibratedMonitor(trace, settings, SIGNALS, REFERENCE, 0.05, 3);

    // what the watch's thread must raise: the offline signals stepped here from FROM_FRAME on
    const signals = frameSignals(trace, settings, SIGNALS, REFERENCE);
    const offline = DriftWatch.arm(plan, calibrations, SIGNALS);
    const expected: DriftAlarm[] = [];
    const values = new Float64Array(SIGNALS.length);
    for (let i = FROM_FRAME; i < FRAMES; i++) {
      signals.forEach((s, k) => (values[k] = s.values[i]!));
      offline.step(i, values, (alarm) => expected.push(alarm));
    }
    expect(expected.some((a) => a.frame < SHIFT_AT)).toBe(true);
    expect(expected.filter((a) => a.signal.startsWith('feature')).length).toBeGreaterThan(0);

    const terms = { reference: REFERENCE, falseAlarmHours: 0.05, signals: SIGNALS, settingsVersion: 0, gate: settings };
    let told = 0;
    const steppedHere = vi.spyOn(DriftWatch.prototype, 'step');
    const watch = new LiveDriftWatch(plan, calibrations, terms, FROM_FRAME, trace, null, () => told++);
    const g = replay(trace, settings).g;
    const stepRun = (from: number, to: number) => {
      for (let i = from; i < to; i++) watch.step(trace, i, g[i]!, settings);
    };
    // runs that end by the batch size, by the timer, mid-batch at a settle
    const timed = FROM_FRAME + 3 * WATCH_BATCH_FRAMES + 5;
    stepRun(FROM_FRAME, timed);
    // the last 5 frames went with the timer, not with a full batch nor a settle
    const deadline = performance.now() + 20 * WATCH_BATCH_MS;
    while (watch.steppedThrough < timed && performance.now() < deadline) await pause(WATCH_BATCH_MS / 5);
    expect(watch.steppedThrough).toBe(timed);
    stepRun(timed, 3000);
    await watch.settled();
    expect(watch.steppedThrough).toBe(3000);
    const early = watch.alarmCount;
    expect(early).toBe(expected.filter((a) => a.frame < 3000).length);
    stepRun(3000, FRAMES);
    await watch.settled();
    expect(steppedHere).not.toHaveBeenCalled();
    steppedHere.mockRestore();

    expect(watch.alarms.map(key)).toEqual(expected.map(key));
    expect(watch.state()).toEqual({
      watching: true,
      fromFrame: FROM_FRAME,
      alarmCount: expected.length,
      stoppedBecause: null,
    });
    expect(told).toBeGreaterThan(0);
    expect(watch.takeNew().map(key)).toEqual(expected.map(key));
    expect(watch.takeNew()).toEqual([]);
    const record = watch.record(FRAMES) as { steppedThrough: number; pairs: unknown[] };
    expect(record.steppedThrough).toBe(FRAMES);
    expect(record.pairs).toHaveLength(plan.pairs.length);
    // a file of fewer frames keeps their alarms alone
    const shorter = watch.record(4000) as { steppedThrough: number; alarms: DriftAlarm[]; alarmCount: number };
    const before4000 = expected.filter((a) => a.frame < 4000);
    expect(shorter.steppedThrough).toBe(4000);
    expect(shorter.alarms.map(key)).toEqual(before4000.map(key));
    expect(shorter.alarmCount).toBe(before4000.length);

    // another gate stops it at that frame; the thread ends, and settling still answers
    watch.step(trace, FRAMES - 1, g[FRAMES - 1]!, { ...settings, zeta: settings.zeta + 0.1 });
    expect(watch.state()).toMatchObject({ watching: false, stoppedBecause: `the knobs moved (frame ${FRAMES - 1})` });
    await watch.settled();
    expect(watch.alarmCount).toBe(expected.length);
    expect(watch.threadEnded).toBe(true);
  }, 120_000);
});
