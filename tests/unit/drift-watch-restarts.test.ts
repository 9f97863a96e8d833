/**
 * Issue 30: a signal's detectors are calibrated as one alarm (false-alarm-threshold.ts), so they
 * must run as one: the scale their thresholds move along, and the watch that restarts all of a
 * signal's detectors after an alarm of any, against a plain definition written here.
 */
import { describe, expect, it } from 'vitest';
import {
  DriftWatch,
  makeStatistic,
  NO_TEST,
  planMonitor,
  type DriftAlarm,
  type ThresholdCalibration,
} from '../../src-shared/drift';
import { horizonMaximaScale } from '../../src-shared/drift/threshold-scale';
import { normalDraw, seededRandom } from '../../src-shared/random';

/** The double just below x. */
function previousDouble(x: number): number {
  if (x === 0) return -Number.MIN_VALUE;
  const bits = new BigInt64Array(Float64Array.of(x).buffer);
  bits[0]! += x > 0 ? -1n : 1n;
  return new Float64Array(bits.buffer)[0]!;
}

describe('the threshold scale of a group', () => {
  it('passes through the sorted maxima, never decreases, and inverse(v) is the least q whose threshold reaches v', () => {
    const random = seededRandom(5);
    for (const maxima of [
      Float64Array.from({ length: 30 }, () => 3 + normalDraw(random)),
      Float64Array.of(0.2, 0.25, 0.25, 0.25, 0.3, 0.3, 0.45),
      Float64Array.of(7.5),
      Float64Array.of(2, 2, 2),
    ]) {
      const scale = horizonMaximaScale(maxima);
      const sorted = Float64Array.from(maxima).sort();
      if (sorted.length > 1) sorted.forEach((v, i) => expect(scale.at(i / (sorted.length - 1))).toBeCloseTo(v, 12));
      let previous = -Infinity;
      for (let q = -1; q <= 2; q += 1 / 64) {
        expect(scale.at(q)).toBeGreaterThanOrEqual(previous);
        previous = scale.at(q);
      }
      const values = [...sorted, sorted[0]! - 1, sorted[sorted.length - 1]! + 0.5];
      for (let i = 0; i < 200; i++)
        values.push(sorted[0]! - 0.5 + random() * (sorted[sorted.length - 1]! - sorted[0]! + 1));
      for (const v of values) {
        const q = scale.inverse(v);
        expect(scale.at(q)).toBeGreaterThanOrEqual(v);
        expect(scale.at(previousDouble(q))).toBeLessThan(v);
      }
    }
  });
});

describe('the drift watch', () => {
  it("restarts every detector of a signal after an alarm of any of them, and only that signal's", () => {
    const random = seededRandom(9);
    const frames = 6000;
    const signals = ['a', 'b'].map((name, s) => {
      const values = new Float64Array(frames);
      let x = 0;
      for (let t = 0; t < frames; t++) {
        x = 0.9 * x + 0.44 * normalDraw(random);
        values[t] = x + (t > 3000 ? 0.3 * (s + 1) : 0);
      }
      return { name, values };
    });
    const plan = planMonitor(signals, {
      referenceStart: 0,
      referenceEnd: 2000,
      meanFramesBetweenFalseAlarms: 1000,
      detectors: ['cusum', 'window-ks'],
      windowFrames: 60,
      strideFrames: 10,
      bins: 10,
      seed: 1,
      paths: 16,
    });
    // low thresholds, so both detectors alarm often and their restarts matter
    const thresholds = [6, 0.3];
    const calibrations: ThresholdCalibration[][] = plan.requests.map((request) =>
      request.specs.map((_, k) => ({
        threshold: thresholds[k]!,
        reachable: true,
        targetFrames: 1000,
        simulatedMeanFrames: 1000,
        paths: 16,
        pathFrames: 3000,
        censoredPaths: 0,
        autoregressionOrder: 1,
        simulatedFrames: 0,
        method: 'set by the test',
      })),
    );
    const watch = DriftWatch.arm(plan, calibrations, ['a', 'b']);
    const alarms: DriftAlarm[] = [];
    const values = new Float64Array(2);
    for (let frame = 2000; frame < frames; frame++) {
      values[0] = signals[0]!.values[frame]!;
      values[1] = signals[1]!.values[frame]!;
      watch.step(frame, values, (alarm) => alarms.push(alarm));
    }
    // the definition: per signal, any detector above its threshold is an alarm, then all of them restart
    const expected: string[] = [];
    signals.forEach((signal, s) => {
      const statistics = plan.requests[s]!.specs.map((spec) => makeStatistic(spec, signal.values.subarray(0, 2000)));
      for (let frame = 2000; frame < frames; frame++) {
        let any = false;
        statistics.forEach((statistic, k) => {
          const value = statistic.nextEncoded(statistic.encode(signal.values[frame]!));
          if (value !== NO_TEST && value > thresholds[k]!) {
            expected.push(`${frame} ${signal.name} ${plan.requests[s]!.specs[k]!.detector}`);
            any = true;
          }
        });
        if (any) for (const statistic of statistics) statistic.reset();
      }
    });
    const got = alarms.map((a) => `${a.frame} ${a.signal} ${a.detector}`);
    const byFrame = (x: string, y: string) => Number(x.split(' ')[0]) - Number(y.split(' ')[0]) || x.localeCompare(y);
    expect(got.length).toBeGreaterThan(20);
    expect(new Set(got.map((a) => a.split(' ')[2])).size).toBe(2);
    expect([...got].sort(byFrame)).toEqual(expected.sort(byFrame));
  });
});
