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
  /** false: every path runs its full length (what the early stop is tested against); default true. */
  stopEarly?: boolean;
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

/** One simulated path: its own random stream, its detectors fitted to its simulated reference, its records. */
interface SimulatedPath {
  stream: CopulaStream;
  statistics: AlarmStatistic[];
  /**
   * Each detector's encoding of every reference value (the stream is made of them), or null when
   * the paths' codes would pass MAX_PRECOMPUTED_CODES: then each frame is encoded as it is drawn.
   */
  codes: Float64Array[] | null;
  max: Float64Array;
  /** Per detector, its running-maximum records: the frame (1-based) and the new maximum. */
  frames: number[][];
  values: number[][];
  /** Frames simulated so far. */
  framesDone: number;
  done: boolean;
}

/** Frames every live path advances between two looks at the bound (a few milliseconds of work). */
const STEP_FRAMES = 16_384;
/** Encoded reference values the paths keep at most (64 MB); past it they encode as they go. */
const MAX_PRECOMPUTED_CODES = 8_000_000;

/**
 * The thresholds of several detectors of one signal, from the same simulated paths: each path's
 * stream is drawn once and fed to every detector (each refitted on the path's simulated
 * reference), which halves the simulation for a CUSUM and a windowed test of the same signal.
 *
 * The paths advance together, STEP_FRAMES at a time, each from its own seeded stream, and a path
 * stops once it can no longer change the answer: after each step, B is a value at which the mean
 * run length is already at least the target counting every path that has not passed it as ending
 * now (a lower bound on its mean, so the threshold is at most B); a path whose running
 * maximum is above B for every detector has its run length known at every threshold up to B, and
 * its later records all lie above B. The thresholds, their simulated means and censored counts are
 * exactly those of running every path to its full length (a path that stopped counts as censored
 * only above its maximum, where every candidate already meets the target); about two thirds of the
 * frames are saved, since a path typically passes the threshold a third of the way in.
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
  const model = fitCopulaAutoregression(reference);
  const n = reference.length;
  const d = makers.length;
  const simulatedReference = new Float64Array(n);
  const precompute = paths * d * n <= MAX_PRECOMPUTED_CODES;
  const stopEarly = options.stopEarly ?? true;
  const states: SimulatedPath[] = Array.from({ length: paths }, (_, p) => {
    const stream = new CopulaStream(model, seededRandom((options.seed + Math.imul(p + 1, 0x9e3779b1)) >>> 0));
    for (let i = 0; i < n; i++) simulatedReference[i] = model.sorted[stream.nextIndex()]!;
    const statistics = makers.map((make) => make(simulatedReference));
    return {
      stream,
      statistics,
      codes: precompute
        ? statistics.map((statistic) => Float64Array.from(model.sorted, (x) => statistic.encode(x)))
        : null,
      max: new Float64Array(d).fill(-Infinity),
      frames: makers.map(() => []),
      values: makers.map(() => []),
      framesDone: 0,
      done: false,
    };
  });
  for (let live = paths; live > 0;) {
    for (const state of states)
      if (!state.done) advance(state, model.sorted, Math.min(pathFrames, state.framesDone + STEP_FRAMES));
    const bounds = makers.map((_, k) => upperBoundOfThreshold(states, k, targetFrames));
    live = 0;
    for (const state of states) {
      if (state.done) continue;
      state.done = state.framesDone >= pathFrames || (stopEarly && bounds.every((bound, k) => state.max[k]! > bound));
      if (!state.done) live++;
    }
  }
  return makers.map((_, k) =>
    thresholdFromRecords(
      states.map((state) => Float64Array.from(state.frames[k]!)),
      states.map((state) => Float64Array.from(state.values[k]!)),
      targetFrames,
      paths,
      pathFrames,
      model.coefficients.length,
    ),
  );
}

/** Runs a path's stream and detectors up to frame `to`, keeping each detector's running-maximum records. */
function advance(state: SimulatedPath, sorted: Float64Array, to: number): void {
  const { stream, statistics, codes, max, frames, values } = state;
  const d = statistics.length;
  for (let t = state.framesDone + 1; t <= to; t++) {
    const index = stream.nextIndex();
    for (let k = 0; k < d; k++) {
      const statistic = statistics[k]!;
      const s = statistic.nextEncoded(codes === null ? statistic.encode(sorted[index]!) : codes[k]![index]!);
      if (s !== NO_TEST && s > max[k]!) {
        max[k] = s;
        frames[k]!.push(t);
        values[k]!.push(s);
      }
    }
  }
  state.framesDone = to;
}

/**
 * A value h of detector k at which the mean run length is at least the target even if every path
 * that has not passed h ended now (Infinity when there is none yet): the threshold the full
 * simulation finds is at most h (the largest record value at or below h has the same run lengths,
 * so it already meets the target). Bisected on the value itself: the records are not sorted.
 */
function upperBoundOfThreshold(states: readonly SimulatedPath[], k: number, targetFrames: number): number {
  const lowerMean = (threshold: number): number => {
    let sum = 0;
    for (const state of states) {
      const at = firstAbove(state.values[k]!, threshold);
      sum += at < 0 ? state.framesDone : state.frames[k]![at]!;
    }
    return sum / states.length;
  };
  let lo = Infinity;
  let hi = -Infinity;
  for (const state of states) {
    const values = state.values[k]!;
    if (values.length === 0) continue;
    lo = Math.min(lo, values[0]!);
    hi = Math.max(hi, values[values.length - 1]!);
  }
  if (!(hi >= lo) || lowerMean(hi) < targetFrames) return Infinity;
  if (lowerMean(lo) >= targetFrames) return lo;
  // lowerMean(lo) < target <= lowerMean(hi): halve the bracket, keeping a value that meets it
  for (let i = 0; i < 60 && hi > lo; i++) {
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    if (lowerMean(mid) >= targetFrames) hi = mid;
    else lo = mid;
  }
  return hi;
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
function firstAbove(values: ArrayLike<number>, threshold: number): number {
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
