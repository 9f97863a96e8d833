import { seededRandom } from '../random';
import { NO_TEST, type AlarmStatistic } from './alarm-statistic';
import { BlockBootstrapStream } from './block-bootstrap';

export interface ThresholdCalibration {
  /** Alarm when the statistic is above this. */
  threshold: number;
  /** The mean frames between false alarms it was fitted to, and what the simulation gives at it. */
  targetFrames: number;
  simulatedMeanFrames: number;
  paths: number;
  pathFrames: number;
  /** Paths with no alarm at the threshold within pathFrames (counted as pathFrames: conservative). */
  censoredPaths: number;
  blockFrames: number;
  method: string;
}

export interface ThresholdOptions {
  paths?: number;
  /** Each path runs this many times the target (about e^-3 of the paths are then censored). */
  pathTargets?: number;
  blockFrames: number;
  seed: number;
}

/**
 * The threshold at which a detector's mean time between false alarms on unshifted data is
 * `targetFrames`, by simulation: `paths` streams drawn from the reference by the moving block
 * bootstrap, each run through a fresh detector for pathTargets x targetFrames frames. With restarts
 * after an alarm the run lengths renew, so the mean time between alarms is the mean run length, and
 * a path's run length at threshold h is the first frame its running maximum passes h: one pass per
 * path gives the run length at every threshold at once. The threshold is the smallest running-maximum
 * value whose mean run length reaches the target; a path that never passes it counts as its full
 * length, which can only lengthen the true mean (conservative).
 */
export function thresholdForMeanFramesBetweenAlarms(
  makeStatistic: () => AlarmStatistic,
  reference: Float64Array,
  targetFrames: number,
  options: ThresholdOptions,
): ThresholdCalibration {
  const paths = options.paths ?? DEFAULT_PATHS;
  const pathFrames = Math.ceil((options.pathTargets ?? DEFAULT_PATH_TARGETS) * targetFrames);
  const random = seededRandom(options.seed);
  // per path, its running-maximum records: the frame (1-based) and the new maximum
  const recordFrames: Float64Array[] = [];
  const recordValues: Float64Array[] = [];
  const encoder = makeStatistic();
  const encoded = reference.map((x) => encoder.encode(x));
  for (let p = 0; p < paths; p++) {
    const stream = new BlockBootstrapStream(encoded, options.blockFrames, random);
    const statistic = makeStatistic();
    const frames: number[] = [];
    const values: number[] = [];
    let max = -Infinity;
    for (let t = 1; t <= pathFrames; t++) {
      const s = statistic.nextEncoded(stream.next());
      if (s !== NO_TEST && s > max) {
        max = s;
        frames.push(t);
        values.push(s);
      }
    }
    recordFrames.push(Float64Array.from(frames));
    recordValues.push(Float64Array.from(values));
  }
  const meanRunLength = (threshold: number): { mean: number; censored: number } => {
    let sum = 0;
    let censored = 0;
    for (let p = 0; p < paths; p++) {
      const at = firstAbove(recordValues[p]!, threshold);
      if (at < 0) {
        sum += pathFrames;
        censored++;
      } else sum += recordFrames[p]![at]!;
    }
    return { mean: sum / paths, censored };
  };
  const candidates = Float64Array.from(recordValues.flatMap((v) => [...v])).sort();
  // the mean run length only grows with the threshold: bisect the candidates for the first that reaches it
  let lo = 0;
  let hi = candidates.length - 1;
  if (candidates.length === 0 || meanRunLength(candidates[hi]!).mean < targetFrames) hi = -1;
  else
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (meanRunLength(candidates[mid]!).mean >= targetFrames) hi = mid;
      else lo = mid + 1;
    }
  const threshold = hi < 0 ? (candidates[candidates.length - 1] ?? 0) : candidates[hi]!;
  const { mean, censored } = meanRunLength(threshold);
  return {
    threshold,
    targetFrames,
    simulatedMeanFrames: mean,
    paths,
    pathFrames,
    censoredPaths: censored,
    blockFrames: options.blockFrames,
    method:
      `simulated: ${paths} unshifted streams of ${pathFrames} frames from the reference ` +
      `(moving block bootstrap, blocks of ${options.blockFrames} frames), restart after each alarm`,
  };
}

/** The index of the first record above the threshold (records increase), or -1. */
function firstAbove(values: Float64Array, threshold: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! > threshold) hi = mid;
    else lo = mid + 1;
  }
  return lo < values.length ? lo : -1;
}

export const DEFAULT_PATHS = 64;
export const DEFAULT_PATH_TARGETS = 3;
