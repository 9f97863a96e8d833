import { seededRandom } from '../random';
import { NO_TEST, type AlarmStatistic } from './alarm-statistic';
import { CopulaStream, fitCopulaAutoregression } from './copula-autoregression';
import {
  estimatedParameter,
  groupRunLength,
  leastParameterReaching,
  meanRunLength,
  scaleFromHorizon,
  upperBoundOfParameter,
  type PathRecords,
} from './path-records';
import { IDENTITY_SCALE, type ThresholdScale } from './threshold-scale';

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
  /** Frames the calibration drew, the paths' simulated references included (what it cost). */
  simulatedFrames: number;
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
  /**
   * false: a path runs to the end of its step even past the estimate (what stopping within a step
   * is tested against: the same answer from fewer frames); default true.
   */
  stopWithinStep?: boolean;
  /**
   * Paths pause once past the q whose estimated mean run length is this many times the target
   * (default ESTIMATE_MARGIN), and resume if the answer proves higher: only the frames drawn depend
   * on it, never the answer (a test sets it low, so the paths must resume).
   */
  estimateMargin?: number;
  /** Past this many paths x detectors x reference values, no code tables (default MAX_PRECOMPUTED_CODES). */
  maxPrecomputedCodes?: number;
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
  makeStatistic: StatisticMaker,
  reference: Float64Array,
  targetFrames: number,
  options: ThresholdOptions,
): ThresholdCalibration {
  return thresholdsForMeanFramesBetweenAlarms([makeStatistic], reference, targetFrames, options)[0]!;
}

/** A detector fitted to a (simulated) reference, given in time order and in ascending order. */
export type StatisticMaker = (reference: Float64Array, sortedReference: Float64Array) => AlarmStatistic;

/** One simulated path: its own random stream, its detectors fitted to its simulated reference, its records. */
interface SimulatedPath extends PathRecords {
  stream: CopulaStream;
  statistics: AlarmStatistic[];
  /**
   * Each detector's code of every reference value (the stream is made of them: codeTable), null
   * for a detector that encodes as it goes, or for all of them when the paths' codes would pass
   * MAX_PRECOMPUTED_CODES.
   */
  codes: Array<ArrayLike<number> | null> | null;
  max: Float64Array;
  done: boolean;
  /** Past the current estimate of the answer: waits until the estimate proves too low. */
  paused: boolean;
}

/** Frames every live path advances between two looks at the bound (a few milliseconds of work). */
const STEP_FRAMES = 16_384;
/**
 * Paths x detectors x reference values past which the paths keep no code tables and encode every
 * frame as it comes (the tables take 1 to 8 bytes a value).
 */
const MAX_PRECOMPUTED_CODES = 8_000_000;
/** A group's scale is set from each detector's largest value within this many times the target. */
const HORIZON_TARGETS = 0.25;
/** Paths pause past the q whose estimated mean run length is this many times the target (estimateMargin). */
const ESTIMATE_MARGIN = 1.05;

/**
 * The thresholds of a signal's detectors, calibrated as one alarm: the group alarms when any of
 * them passes its threshold, and all of them restart then (drift-watch.ts runs them so), so the
 * mean time between the group's false alarms is `targetFrames`. Each path's stream is drawn once
 * and fed to every detector (each refitted on the path's simulated reference). One detector alone
 * is the single-threshold calibration above. For two or more, the thresholds move together along a
 * scale (threshold-scale.ts): every path first runs HORIZON_TARGETS x the target, each detector's
 * largest value within it over the paths sets its scale (equal chances of an alarm within that
 * horizon, so about equal shares of the false alarms), and the parameter q of the scale is then
 * found as a single threshold is. Against a union bound (each detector held to twice the target),
 * the group alarms at the rate stated rather than below it, and a path runs to the group's first
 * alarm rather than to both detectors' at twice the target: about a third of the frames.
 *
 * The paths advance together, STEP_FRAMES at a time, each from its own seeded stream, and a path
 * stops once it can no longer change the answer: after each step, qB is a value at which the mean
 * run length is already at least the target counting every path that has not passed it as ending
 * now (a lower bound on its mean, so the answer is at most qB); a path on which some detector's
 * running maximum is above its threshold at qB has its group run length known at every q up to qB.
 * The thresholds, their simulated means and censored counts are exactly those of running every
 * path to its full length.
 */
export function thresholdsForMeanFramesBetweenAlarms(
  makers: ReadonlyArray<StatisticMaker>,
  reference: Float64Array,
  targetFrames: number,
  options: ThresholdOptions,
): ThresholdCalibration[] {
  const paths = options.paths ?? DEFAULT_PATHS;
  const minPathFrames = options.minPathFrames ?? 0;
  const pathFrames = Math.max(minPathFrames, Math.ceil((options.pathTargets ?? DEFAULT_PATH_TARGETS) * targetFrames));
  const model = fitCopulaAutoregression(reference);
  const n = reference.length;
  const d = makers.length;
  const horizonFrames =
    d === 1 ? 0 : Math.min(pathFrames, Math.max(minPathFrames, Math.ceil(HORIZON_TARGETS * targetFrames)));
  const simulatedReference = new Float64Array(n);
  const sortedSimulatedReference = new Float64Array(n);
  const indexCounts = new Uint32Array(n);
  const precompute = paths * d * n <= (options.maxPrecomputedCodes ?? MAX_PRECOMPUTED_CODES);
  const stopEarly = options.stopEarly ?? true;
  const states: SimulatedPath[] = Array.from({ length: paths }, (_, p) => {
    const stream = new CopulaStream(model, seededRandom((options.seed + Math.imul(p + 1, 0x9e3779b1)) >>> 0));
    indexCounts.fill(0);
    for (let i = 0; i < n; i++) {
      const index = stream.nextIndex();
      simulatedReference[i] = model.sorted[index]!;
      indexCounts[index]!++;
    }
    // the stream's values are model.sorted[index]: counted by index, they come out in order
    for (let index = 0, at = 0; index < n; index++)
      for (let c = indexCounts[index]!; c > 0; c--) sortedSimulatedReference[at++] = model.sorted[index]!;
    const statistics = makers.map((make) => make(simulatedReference, sortedSimulatedReference));
    return {
      stream,
      statistics,
      codes: precompute ? statistics.map((statistic) => statistic.codeTable(model.sorted)) : null,
      max: new Float64Array(d).fill(-Infinity),
      frames: makers.map(() => []),
      values: makers.map(() => []),
      framesDone: 0,
      done: false,
      paused: false,
    };
  });
  let scales: Array<ThresholdScale | null> | null = d === 1 ? [IDENTITY_SCALE] : null;
  /** Every q at or below it has a mean run length under the target (checked with every path known there). */
  let tooLow = -Infinity;
  /**
   * The least bound so far: every earlier one is a bound too, and a path stopped at one must stay
   * known at every later q (a bisected bound can come out a little higher at a later look).
   */
  let bound = Infinity;
  /**
   * The last look's estimate (Infinity before there is one, or after a step that advanced little):
   * a path that passes it within a step stops there.
   */
  let pauseAt = Infinity;
  for (let active = paths; ;) {
    // about the same frames between two looks however few paths run (a look costs a few searches a path)
    const step = Math.ceil((STEP_FRAMES * paths) / Math.max(1, active));
    const stopAbove =
      scales === null || !Number.isFinite(pauseAt)
        ? null
        : Float64Array.from(scales, (scale) => (scale === null ? Infinity : scale.at(pauseAt)));
    let advanced = 0;
    for (const state of states)
      if (!state.done && !state.paused) {
        const from = state.framesDone;
        advance(state, model.sorted, Math.min(pathFrames, state.framesDone + step), stopAbove);
        advanced += state.framesDone - from;
      }
    if (scales === null && states.every((state) => state.framesDone >= horizonFrames))
      scales = makers.map((_, k) => scaleFromHorizon(states, k, horizonFrames));
    if (scales !== null && stopEarly) bound = Math.min(bound, upperBoundOfParameter(states, scales, targetFrames));
    let estimate = bound;
    if (scales !== null && stopEarly) {
      estimate = Math.min(
        bound,
        estimatedParameter(states, scales, (options.estimateMargin ?? ESTIMATE_MARGIN) * targetFrames, pathFrames),
      );
      // no estimate above what proved too low: the paths run on to the bound, as without estimates
      if (!(estimate > tooLow)) estimate = bound;
      // A path stopped right where it passes the estimate resumes when the estimate rises past it,
      // and on some streams the estimate then creeps up a little at each look, the paths a few
      // frames: 1,812 looks for one signal of the hour instead of 17. After a step that advanced
      // the paths by fewer than STEP_FRAMES in all, the next runs them to its end, as it did
      // before paths stopped within a step.
      pauseAt = advanced >= STEP_FRAMES && options.stopWithinStep !== false ? estimate : Infinity;
    }
    active = 0;
    for (const state of states) {
      if (state.done) continue;
      state.done = state.framesDone >= pathFrames || (scales !== null && groupRunLength(state, scales, bound) >= 0);
      state.paused = !state.done && scales !== null && groupRunLength(state, scales, estimate) >= 0;
      if (!state.done && !state.paused) active++;
    }
    if (active > 0) continue;
    // every path is known at every q up to the estimate: done if the target is met there
    if (
      states.every((state) => state.done) ||
      meanRunLength(states, scales!, estimate, pathFrames).mean >= targetFrames
    )
      break;
    tooLow = estimate;
  }
  let simulatedFrames = paths * n;
  for (const state of states) simulatedFrames += state.framesDone;
  return calibrationsFromRecords(
    states,
    scales!,
    { above: tooLow, atMost: bound },
    targetFrames,
    pathFrames,
    model.coefficients.length,
    d,
  ).map((calibration) => ({ ...calibration, simulatedFrames }));
}

/**
 * Runs a path's stream and detectors up to frame `to`, keeping each detector's running-maximum
 * records, or only up to the first frame on which a detector passes its `stopAbove` (its threshold
 * at the last estimate): the path would pause there, and the frames after it would only be drawn
 * ahead of need (up to a whole step a path, tens of thousands of frames once few paths run).
 */
function advance(state: SimulatedPath, sorted: Float64Array, to: number, stopAbove: Float64Array | null): void {
  const { stream, statistics, codes, max, frames, values } = state;
  const d = statistics.length;
  // The first two detectors (the CUSUM and the windowed test of a monitor's signal, in that order)
  // each at a call site of its own, which then sees one class and is inlined; one site for both
  // checked the class at every call (the loop took 35 ns a frame instead of 26 on the build machine).
  const first = statistics[0]!;
  const second = d > 1 ? statistics[1]! : null;
  const firstCodes = codes?.[0] ?? null;
  const secondCodes = codes?.[1] ?? null;
  const record = (k: number, t: number, s: number): boolean => {
    max[k] = s;
    frames[k]!.push(t);
    values[k]!.push(s);
    return stopAbove !== null && s > stopAbove[k]!;
  };
  for (let t = state.framesDone + 1; t <= to; t++) {
    const index = stream.nextIndex();
    let passed = false;
    const s0 = first.nextEncoded(firstCodes === null ? first.encode(sorted[index]!) : firstCodes[index]!);
    if (s0 !== NO_TEST && s0 > max[0]!) passed = record(0, t, s0);
    if (second !== null) {
      const s1 = second.nextEncoded(secondCodes === null ? second.encode(sorted[index]!) : secondCodes[index]!);
      if (s1 !== NO_TEST && s1 > max[1]! && record(1, t, s1)) passed = true;
    }
    for (let k = 2; k < d; k++) {
      const statistic = statistics[k]!;
      const table = codes?.[k] ?? null;
      const s = statistic.nextEncoded(table === null ? statistic.encode(sorted[index]!) : table[index]!);
      if (s !== NO_TEST && s > max[k]! && record(k, t, s)) passed = true;
    }
    if (passed) {
      state.framesDone = t;
      return;
    }
  }
  state.framesDone = to;
}

/**
 * Each detector's threshold at the least q whose mean run length reaches the target
 * (path-records.ts), with what the simulation gives there; `known` is what the looks proved: every
 * q at or below `above` falls short, and the target is met at `atMost`.
 */
function calibrationsFromRecords(
  states: readonly SimulatedPath[],
  scales: ReadonlyArray<ThresholdScale | null>,
  known: { above: number; atMost: number },
  targetFrames: number,
  pathFrames: number,
  order: number,
  detectors: number,
): Array<Omit<ThresholdCalibration, 'simulatedFrames'>> {
  const paths = states.length;
  const q = leastParameterReaching(states, scales, known, targetFrames, pathFrames);
  const { mean, censored } = meanRunLength(states, scales, q, pathFrames);
  // Infinity: no path has a record
  const groupReachable = Number.isFinite(q) && censored < paths;
  const method =
    `simulated: ${paths} unshifted streams of ${pathFrames} frames from a Gaussian-copula AR(${order}) ` +
    'fitted to the reference, the detector refitted on a simulated reference each (Gandy and Kvaloy 2013), ' +
    (detectors === 1
      ? 'restart after each alarm'
      : `jointly with the signal's other detector${detectors > 2 ? 's' : ''} (an alarm of any restarts all; ` +
        `thresholds at equal chances of an alarm within ${Math.ceil(HORIZON_TARGETS * targetFrames)} frames)`);
  return scales.map((scale) => ({
    threshold: scale === null || !Number.isFinite(q) ? Infinity : scale.at(q),
    reachable: groupReachable && scale !== null,
    targetFrames,
    simulatedMeanFrames: mean,
    paths,
    pathFrames,
    censoredPaths: censored,
    autoregressionOrder: order,
    method,
  }));
}

export const DEFAULT_PATHS = 64;
export const DEFAULT_PATH_TARGETS = 3;
