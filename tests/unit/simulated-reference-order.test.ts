/**
 * The threshold calibration hands each detector its path's simulated reference twice: in time
 * order, and in ascending order built by counting the stream's indices (false-alarm-threshold.ts),
 * which the windowed KS takes its edges from instead of sorting. The second must be the first,
 * sorted, on every path, ties and a two-valued signal included.
 */
import { describe, expect, it } from 'vitest';
import { NO_TEST, type AlarmStatistic } from '../../src-shared/drift/alarm-statistic';
import { thresholdsForMeanFramesBetweenAlarms } from '../../src-shared/drift/false-alarm-threshold';
import { normalDraw, seededRandom } from '../../src-shared/random';

/** A detector that never tests, recording what it was fitted to. */
function recordingMaker(seen: Array<{ reference: Float64Array; sorted: Float64Array }>) {
  return (reference: Float64Array, sortedReference: Float64Array): AlarmStatistic => {
    seen.push({ reference: reference.slice(), sorted: sortedReference.slice() });
    return {
      encode: (x) => x,
      codeTable: () => null,
      nextEncoded: () => NO_TEST,
      reset: () => {},
    };
  };
}

describe("a simulated path's reference in ascending order", () => {
  const random = seededRandom(11);
  const continuous = Float64Array.from({ length: 600 }, () => normalDraw(random));
  const tied = Float64Array.from({ length: 600 }, (_, i) => Math.round(continuous[i]! * 2) / 2);
  const twoValued = Float64Array.from({ length: 600 }, (_, i) => (continuous[i]! > 0.8 ? 1 : 0));
  for (const [name, reference] of [
    ['continuous', continuous],
    ['with ties', tied],
    ['two-valued', twoValued],
  ] as const)
    it(`is the path's simulated reference sorted (${name})`, () => {
      const seen: Array<{ reference: Float64Array; sorted: Float64Array }> = [];
      thresholdsForMeanFramesBetweenAlarms([recordingMaker(seen)], reference, 200, { seed: 4, paths: 6 });
      expect(seen).toHaveLength(6);
      for (const { reference: simulated, sorted } of seen) {
        // bit for bit (toEqual tells -0 from +0): the stream's values are the fitted model's sorted
        // reference, sorted as sort() sorts, a -0 before a +0
        expect(sorted).toEqual(Float64Array.from(simulated).sort());
        expect(new Set(simulated).size).toBeGreaterThan(1);
      }
    });
});
