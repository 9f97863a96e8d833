/**
 * The drift monitor's thresholds on threads (core/drift/threshold-threads.ts): the same answer as
 * the monitor computed in one piece on the caller's thread, and a cancelled call ends its threads
 * and answers CANCELLED.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate/gate-settings';
import { frameSignals, monitorSignals } from '../../src-shared/drift';
import { normalDraw, seededRandom } from '../../src-shared/random';
import { monitorTrace, type MonitorTraceInput } from '../../src-main/core/use-cases/monitor-trace';
import { syntheticTrace } from '../support/synthetic-trace';

const noise = seededRandom(5);
const trace = syntheticTrace({
  frames: 12_000,
  seed: 9,
  uRef: (i) => 0.5 + 0.1 * normalDraw(noise) + (i >= 9000 ? 0.1 : 0),
});
const input: MonitorTraceInput = {
  trace,
  settings: DEFAULT_GATE_SETTINGS,
  signals: ['confidence', 'gate-target', 'gate'],
  reference: { start: 0, end: 4000 },
  falseAlarmHours: 0.05,
  detectors: ['cusum', 'window-ks'],
  windowFrames: 150,
  strideFrames: 15,
  bins: 20,
  seed: 4,
};

describe('drift thresholds on threads', () => {
  it('give the monitor computed on one thread, threshold for threshold and alarm for alarm', async () => {
    const threaded = await monitorTrace(input);
    const single = monitorSignals(frameSignals(trace, DEFAULT_GATE_SETTINGS, input.signals), {
      referenceStart: 0,
      referenceEnd: 4000,
      meanFramesBetweenFalseAlarms: 0.05 * 3600 * threaded.framesPerSecond,
      detectors: input.detectors,
      windowFrames: 150,
      strideFrames: 15,
      bins: 20,
      seed: 4,
    });
    expect(threaded.pairs).toEqual(single.pairs);
    expect(threaded.alarms).toEqual(single.alarms);
    expect(threaded.alarms.some((a) => a.frame >= 9000)).toBe(true);
  });

  it('a cancelled monitor answers CANCELLED', async () => {
    const controller = new AbortController();
    const running = monitorTrace({ ...input, falseAlarmHours: 2, signal: controller.signal });
    // not within the threads' start: ending a thread still loading its modules took the whole
    // test process down once in CI (Node's worker termination during module loading); half a
    // second is past a thread's start here (0.1-0.3 s), and at 2 hours the run takes 3.7 s
    setTimeout(() => controller.abort(), 500);
    await expect(running).rejects.toMatchObject({ code: 'CANCELLED' });
  });
});
