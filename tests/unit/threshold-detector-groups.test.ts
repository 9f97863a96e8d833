/**
 * The threshold calibration (src-shared/drift/false-alarm-threshold.ts) on what the monitor's two
 * detectors do not exercise: a group of three detectors (the loop past the first two call sites),
 * and paths that keep no code tables (past maxPrecomputedCodes every frame is encoded as it comes).
 * Each must give the answer of the full simulation, and of the paths with tables.
 */
import { describe, expect, it } from 'vitest';
import type { AlarmStatistic } from '../../src-shared/drift/alarm-statistic';
import { TwoSidedCusum } from '../../src-shared/drift/cusum';
import { meanAndSd } from '../../src-shared/drift/detector-statistic';
import {
  thresholdsForMeanFramesBetweenAlarms,
  type StatisticMaker,
  type ThresholdCalibration,
} from '../../src-shared/drift/false-alarm-threshold';
import { WindowKs } from '../../src-shared/drift/window-ks';
import { ar1 } from '../support/ar1-series';

const cusum: StatisticMaker = (fitted): AlarmStatistic => {
  const { mean, sd } = meanAndSd(fitted);
  return new TwoSidedCusum(mean, sd);
};
const shortWindow: StatisticMaker = (fitted, sorted) => new WindowKs(fitted, 60, 10, 10, sorted);
const longWindow: StatisticMaker = (fitted, sorted) => new WindowKs(fitted, 150, 30, 20, sorted);
const answer = ({ simulatedFrames: _frames, ...rest }: ThresholdCalibration) => rest;

describe('threshold calibration, beyond two detectors with code tables', () => {
  for (const seed of [0, 1, 2])
    it(`three detectors as one alarm, with and without code tables: the full simulation's answer (seed ${seed})`, () => {
      const reference = ar1(1500, 0.8, 200 + seed);
      const target = 8000 + 3000 * seed;
      const makers = [cusum, shortWindow, longWindow];
      const options = { seed, paths: 16, minPathFrames: 450 };
      const full = thresholdsForMeanFramesBetweenAlarms(makers, reference, target, { ...options, stopEarly: false });
      const early = thresholdsForMeanFramesBetweenAlarms(makers, reference, target, options);
      const untabled = thresholdsForMeanFramesBetweenAlarms(makers, reference, target, {
        ...options,
        maxPrecomputedCodes: 0,
      });
      expect(full.every((c) => c.reachable)).toBe(true);
      expect(early.map(answer)).toEqual(full.map(answer));
      expect(untabled).toEqual(early);
      // each detector got a threshold of its own scale
      expect(new Set(full.map((c) => c.threshold)).size).toBe(3);
    });
});
