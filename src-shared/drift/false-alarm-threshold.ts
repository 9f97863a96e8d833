import { seededRandom } from '../random';
import { NO_TEST, type AlarmStatistic } from './alarm-statistic';
import { CopulaStream, fitCopulaAutoregression } from './copula-autoregression';

export interface ThresholdCalibration {
  /** Alarm when the statistic is above this. */
  threshold: number;
  /**
   * false when no threshold met the target within the simulated paths (every path censored, or
   * the statistic never tested): the pair cannot be monitored at this target, and says so.
   */
  reachable: boolean;
  /** The mean frames between false alarms it was fitted to, and what the simulation gives at it. */
  targetFrames: number;
  simulatedMeanFrames: number;
  paths: number;
  pathFrames: number;
  /** Paths with no alarm at the threshold within pathFrames (counted as pathFrames: conservative). */
  censoredPaths: number;
  /** The AR order fitted to the reference's normal scores. */
  autoregressionOrder: number;
  method: string;
}

export interface ThresholdOptions {
  paths?: number;
  /** Each path runs this many times the target (about e^-3 of the paths are then censored). */
  pathTargets?: number;
  /** Frames a path runs at least (a windowed test must fill its window and test a few times). */
  minPathFrames?: number;
  seed: number;
}

/**
 * The threshold at which a detector's mean time between false alarms on unshifted data is
 * `targetFrames`, by simulation: `paths` streams from a Gaussian-copula autoregression fitted to the
 * reference (copula-autoregression.ts). Each path first simulates a reference of the same length
 * and fits the detector to it (its mean and sd, or its quantile edges), so the thresholds carry the
 * reference's own sampling error, which the detector run on real data carries too (the bootstrap
 * for control charts with estimated parameters, Gandy and Kvaloy 2013); then it runs the detector
 * for pathTargets x targetFrames frames. With restarts after an alarm the run lengths renew, so the
 * mean time between alarms is the mean run length, and a path's run length at threshold h is the
 * first frame its running maximum passes h: one pass per path gives the run length at every
 * threshold at once. The threshold is the smallest running-maximum value whose mean run length
 * reaches the target. A path that never passes it counts as its full length; its true run length
 * can only be longer, so the true mean is at least the simulated one (conservative).
 */
export function thresholdForMeanFramesBetweenAlarms(
  makeStatistic: (reference: Float64Array) => AlarmStatistic,
  reference: Float64Array,
  targetFrames: number,
  options: ThresholdOptions,
): ThresholdCalibration {
  return thresholdsForMeanFramesBetweenAlarms([makeStatistic], reference, targetFrames, options)[0]!;
}

/**
 * The thresholds of several detectors of one signal, from the same simulated paths: each path's
 * stream is drawn once and fed to every detector (each refitted on the path's simulated
 * reference), which halves the simulation for a CUSUM and a windowed test of the same signal.
 */
export function thresholdsForMeanFramesBetweenAlarms(
  makers: ReadonlyArray<(reference: Float64Array) => AlarmStatistic>,
  reference: Float64Array,
  targetFrames: number,
  options: ThresholdOptions,
): ThresholdCalibration[] {
  const paths = options.paths ?? DEFAULT_PATHS;
  const pathFrames = Math.max(
    options.minPathFrames ?? 0,
    Math.ceil((options.pathTargets ?? DEFAULT_PATH_TARGETS) * targetFrames),
  );
  const random = seededRandom(options.seed);
  const model = fitCopulaAutoregression(reference);
  const n = reference.length;
  const d = makers.length;
  const simulatedReference = new Float64Array(n);
  const codes = makers.map(() => new Float64Array(n));
  // per detector and path, its running-maximum records: the frame (1-based) and the new maximum
  const recordFrames = makers.map(() => [] as Float64Array[]);
  const recordValues = makers.map(() => [] as Float64Array[]);
  for (let p = 0; p < paths; p++) {
    const stream = new CopulaStream(model, random);
    for (let i = 0; i < n; i++) simulatedReference[i] = model.sorted[stream.nextIndex()]!;
    const statistics = makers.map((make) => make(simulatedReference));
    // the stream is made of the reference's values: each is encoded once a path for each detector
    statistics.forEach((statistic, k) => {
      for (let i = 0; i < n; i++) codes[k]![i] = statistic.encode(model.sorted[i]!);
    });
    const frames = makers.map(() => [] as number[]);
    const values = makers.map(() => [] as number[]);
    const max = new Float64Array(d).fill(-Infinity);
    for (let t = 1; t <= pathFrames; t++) {
      const index = stream.nextIndex();
      for (let k = 0; k < d; k++) {
        const s = statistics[k]!.nextEncoded(codes[k]![index]!);
        if (s !== NO_TEST && s > max[k]!) {
          max[k] = s;
          frames[k]!.push(t);
          values[k]!.push(s);
        }
      }
    }
    for (let k = 0; k < d; k++) {
      recordFrames[k]!.push(Float64Array.from(frames[k]!));
      recordValues[k]!.push(Float64Array.from(values[k]!));
    }
  }
  return makers.map((_, k) =>
    thresholdFromRecords(
      recordFrames[k]!,
      recordValues[k]!,
      targetFrames,
      paths,
      pathFrames,
      model.coefficients.length,
    ),
  );
}

function thresholdFromRecords(
  recordFrames: Float64Array[],
  recordValues: Float64Array[],
  targetFrames: number,
  paths: number,
  pathFrames: number,
  order: number,
): ThresholdCalibration {
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
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (meanRunLength(candidates[mid]!).mean >= targetFrames) hi = mid;
    else lo = mid + 1;
  }
  const threshold = candidates.length === 0 ? Infinity : candidates[hi]!;
  const { mean, censored } = meanRunLength(threshold);
  return {
    threshold,
    reachable: candidates.length > 0 && censored < paths,
    targetFrames,
    simulatedMeanFrames: mean,
    paths,
    pathFrames,
    censoredPaths: censored,
    autoregressionOrder: order,
    method:
      `simulated: ${paths} unshifted streams of ${pathFrames} frames from a Gaussian-copula AR(${order}) ` +
      'fitted to the reference, the detector refitted on a simulated reference each (Gandy and Kvaloy 2013), restart after each alarm',
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
