/**
 * The probes' plans (src-shared/probes): defaults as the issue states them, the schedules they
 * play, the frequencies (whole frames per period, log-spaced, distinct), seeded offsets, and
 * refusals by field.
 */
import { describe, expect, it } from 'vitest';
import { corruptionAt } from '../../src-shared/corruptions/schedule';
import {
  frequencyProbeStream,
  parseFrequencyProbePlan,
  parseStepProbePlan,
  probePeriodsFrames,
  stepProbeFrames,
  stepProbeOffsets,
  stepProbeSchedule,
} from '../../src-shared/probes';

describe('the step probe plan', () => {
  it('defaults: shot noise 1 -> 5 -> 1, 300 frames a level, 32 realisations at 30 fps', () => {
    const plan = parseStepProbePlan({});
    expect(plan).toMatchObject({ corruption: 'shot_noise', lowSeverity: 1, highSeverity: 5, realisations: 32 });
    expect(stepProbeFrames(plan)).toBe(900);
    const schedule = stepProbeSchedule(plan);
    expect([0, 299, 300, 599, 600, 899].map((n) => corruptionAt(schedule, n, 1).severity)).toEqual([1, 1, 5, 5, 1, 1]);
  });

  it('offsets are seeded, inside the source, and differ between realisations', () => {
    const plan = parseStepProbePlan({ seed: 4 });
    const offsets = stepProbeOffsets(plan, 10_000);
    expect(offsets).toEqual(stepProbeOffsets(plan, 10_000));
    expect(new Set(offsets).size).toBe(32);
    for (const o of offsets) expect(o + 900).toBeLessThanOrEqual(10_000);
    expect(stepProbeOffsets(parseStepProbePlan({ seed: 5 }), 10_000)).not.toEqual(offsets);
    expect(() => stepProbeOffsets(plan, 899)).toThrow(/needs 900 frames per realisation; the source has 899/);
  });

  it('refuses bad plans by field', () => {
    expect(() => parseStepProbePlan({ realisations: 1 })).toThrow(/realisations/);
    expect(() => parseStepProbePlan({ corruption: 'rain' })).toThrow(/corruption/);
    expect(() => parseStepProbePlan({ lowSeverity: 3, highSeverity: 3 })).toThrow(/must differ/);
    expect(() => parseStepProbePlan({ extra: 1 })).toThrow(/extra/);
  });
});

describe('the frequency probe plan', () => {
  it('8 distinct whole periods from 120 frames down to 3 (0.25 Hz to a third of 30 fps), log-spaced', () => {
    const plan = parseFrequencyProbePlan({});
    const periods = probePeriodsFrames(plan);
    expect(periods).toHaveLength(8);
    expect(periods[0]).toBe(120);
    expect(periods[7]).toBe(3);
    for (let i = 1; i < 8; i++) {
      const ratio = periods[i - 1]! / periods[i]!;
      expect(ratio).toBeGreaterThan(1.4);
      expect(ratio).toBeLessThan(2.1);
    }
    // a crowded plan still gives distinct periods
    const crowded = probePeriodsFrames(parseFrequencyProbePlan({ frequencies: 10, longestPeriodFrames: 12 }));
    expect(new Set(crowded).size).toBe(10);
    expect(Math.min(...crowded)).toBe(3);
  });

  it('each stream: the settling allowance, then whole batches of whole periods under the sine schedule', () => {
    const plan = parseFrequencyProbePlan({});
    const stream = frequencyProbeStream(plan, 9);
    expect(stream.analysisFrames % 9).toBe(0);
    expect(stream.analysisFrames / plan.batches).toBeGreaterThanOrEqual(plan.minBatchFrames);
    expect(stream.frames).toBe(plan.settleFrames + stream.analysisFrames);
    // the severity repeats every period
    for (let n = 0; n < 27; n++)
      expect(corruptionAt(stream.schedule, n, 1).severity).toBe(corruptionAt(stream.schedule, n + 9, 1).severity);
    expect(frequencyProbeStream(plan, 120).analysisFrames).toBe(8 * 120);
  });

  it('refuses modulation outside the severity scale, and too many frequencies for the periods', () => {
    expect(() => parseFrequencyProbePlan({ meanSeverity: 4, amplitude: 2 })).toThrow(/within 0 \.\. 5/);
    expect(() => parseFrequencyProbePlan({ frequencies: 8, longestPeriodFrames: 8 })).toThrow(/8 frequencies/);
    expect(() => parseFrequencyProbePlan({ batches: 1 })).toThrow(/batches/);
  });
});
