/**
 * The searches the threshold calibration makes over its parameter q (src-shared/drift/
 * monotone-bisection.ts, path-records.ts), against step functions whose steps are known exactly,
 * and the records' least q against a search of every record, however little the looks proved.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bisectParameter, firstIndexWhere, shortOfTarget } from '../../src-shared/drift/monotone-bisection';
import { leastParameterReaching, meanRunLength, type PathRecords } from '../../src-shared/drift/path-records';
import { horizonMaximaScale, IDENTITY_SCALE, type ThresholdScale } from '../../src-shared/drift/threshold-scale';
import { nextDown } from '../../src-shared/next-double';

/** A non-decreasing step function: how many of the steps are at or below q. */
const stepsAtOrBelow = (steps: readonly number[]) => (q: number) => steps.filter((s) => s <= q).length;

const sortedSteps = fc
  .uniqueArray(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: 1, maxLength: 12 })
  .map((steps) => [...steps].sort((a, b) => a - b));

describe('searches over a non-decreasing function of q', () => {
  it('the first index where a monotone predicate holds is the linear scan', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -50, max: 50 })), fc.integer({ min: -60, max: 60 }), (raw, x) => {
        const values = [...raw].sort((a, b) => a - b);
        const scanned = values.findIndex((v) => v > x);
        expect(firstIndexWhere(values.length, (i) => values[i]! > x)).toBe(scanned < 0 ? values.length : scanned);
      }),
    );
  });

  it('a q short of the target lies just below the least q that reaches it', () => {
    fc.assert(
      fc.property(sortedSteps, fc.nat(), (steps, pick) => {
        const wanted = 1 + (pick % steps.length);
        const least = steps[wanted - 1]!;
        const lo = steps[0]! - 1;
        const hi = steps[steps.length - 1]! + 1;
        const mean = stepsAtOrBelow(steps);
        const short = shortOfTarget(mean, wanted, lo, hi);
        expect(mean(short)).toBeLessThan(wanted);
        expect(short).toBeLessThan(least);
        // 48 halvings of the bracket, or the next double
        expect(least - short).toBeLessThanOrEqual(Math.max((hi - lo) * 2 ** -47, Math.abs(least) * 2 ** -50));
        // a bound above which the target is met, within (hi - lo) / 2^32 of the least q
        const bound = bisectParameter(mean, wanted, lo, hi);
        expect(mean(bound)).toBeGreaterThanOrEqual(wanted);
        expect(bound - least).toBeLessThanOrEqual((hi - lo) * 2 ** -31);
      }),
    );
  });

  it("says nothing when even the bracket's low end reaches the target, or the bracket is empty or unbounded", () => {
    const mean = stepsAtOrBelow([0, 1, 2]);
    expect(shortOfTarget(mean, 1, 0, 5)).toBe(-Infinity);
    expect(shortOfTarget(mean, 2, 3, 3)).toBe(-Infinity);
    expect(shortOfTarget(mean, 2, -1, Infinity)).toBe(-Infinity);
    expect(bisectParameter(mean, 4, -1, 5)).toBe(Infinity);
    expect(bisectParameter(mean, 1, 0, 5)).toBe(0);
  });
});

/** Paths of increasing records, one detector, each path run `framesDone` frames. */
const pathRecords = fc.array(
  fc
    .array(fc.tuple(fc.integer({ min: 1, max: 400 }), fc.double({ min: 0, max: 10, noNaN: true })), {
      maxLength: 8,
    })
    .map((draws): PathRecords => {
      const frames: number[] = [];
      const values: number[] = [];
      let frame = 0;
      let value = -Infinity;
      for (const [gap, rise] of draws) {
        frame += gap;
        value = value === -Infinity ? rise : value + rise + 1e-3;
        frames.push(frame);
        values.push(value);
      }
      return { frames: [frames], values: [values], framesDone: frame + 50 };
    }),
  { minLength: 1, maxLength: 10 },
);

describe("the records' least q that reaches the target", () => {
  it('is the same from the range the looks proved as from every record, and from ranges that would mislead it', () => {
    fc.assert(
      fc.property(pathRecords, fc.integer({ min: 1, max: 3000 }), fc.boolean(), (states, targetFrames, scaled) => {
        const pathFrames = Math.max(...states.map((s) => s.framesDone));
        // q itself as the threshold, or a group's scale of its paths' largest values
        const largest = states.flatMap((s) => s.values[0]!.slice(-1));
        const scales: ThresholdScale[] = [
          scaled && largest.length > 0 ? horizonMaximaScale(Float64Array.from(largest)) : IDENTITY_SCALE,
        ];
        const mean = (q: number) => meanRunLength(states, scales, q, pathFrames).mean;
        const everything = { above: -Infinity, atMost: Infinity };
        const full = leastParameterReaching(states, scales, everything, targetFrames, pathFrames);
        const values = states.flatMap((s) => s.values[0]!.map((v) => scales[0]!.inverse(v)));
        const lo = Math.min(...values, 0) - 1;
        const hi = Math.max(...values, 0) + 1;
        // what the looks prove: a bound where the target is met, and a q that falls short
        const bound = bisectParameter(mean, targetFrames, lo, hi);
        const tooLow = Number.isFinite(bound) ? shortOfTarget(mean, targetFrames, lo, bound) : -Infinity;
        const proved = { above: tooLow, atMost: bound };
        expect(leastParameterReaching(states, scales, proved, targetFrames, pathFrames)).toBe(full);
        // a range with no record in it, one whose answer falls short (it ends below the answer), and
        // one whose low end does not fall short (it starts at the answer): every record is searched
        const misleading = [
          { above: hi, atMost: hi },
          { above: -Infinity, atMost: lo },
          ...(Number.isFinite(full)
            ? [
                { above: -Infinity, atMost: nextDown(full) },
                { above: full, atMost: hi },
              ]
            : []),
        ];
        for (const range of misleading)
          expect(leastParameterReaching(states, scales, range, targetFrames, pathFrames)).toBe(full);
      }),
    );
  });
});
