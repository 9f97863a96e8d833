import { bisectParameter, firstIndexWhere, shortOfTarget } from './monotone-bisection';
import { countAtMost } from './sorted-search';
import { horizonMaximaScale, type ThresholdScale } from './threshold-scale';

/**
 * What simulated paths' running-maximum records say about the thresholds' parameter q
 * (false-alarm-threshold.ts): each detector's threshold is scale.at(q), a path's group run length
 * at q is the first frame on which a record passes its threshold, and a path's records increase.
 */
export interface PathRecords {
  /** Per detector, its running-maximum records: the frame (1-based) and the new maximum. */
  frames: number[][];
  values: number[][];
  /** Frames simulated so far. */
  framesDone: number;
}

/**
 * Detector k's scale from its largest value within the first `horizonFrames` of every path, or
 * null when it never tested there on any path (it cannot alarm at any threshold the group can set).
 */
export function scaleFromHorizon(
  states: readonly PathRecords[],
  k: number,
  horizonFrames: number,
): ThresholdScale | null {
  const maxima: number[] = [];
  for (const state of states) {
    const at = countAtMost(state.frames[k]!, horizonFrames) - 1;
    if (at >= 0) maxima.push(state.values[k]![at]!);
  }
  return maxima.length === 0 ? null : horizonMaximaScale(Float64Array.from(maxima));
}

/**
 * A path's group run length at parameter q: the first frame on which any detector passed its
 * threshold, or -1 when none has within the frames simulated.
 */
export function groupRunLength(state: PathRecords, scales: ReadonlyArray<ThresholdScale | null>, q: number): number {
  let first = -1;
  for (let k = 0; k < scales.length; k++) {
    const scale = scales[k];
    if (scale === null || scale === undefined) continue;
    const at = firstAbove(state.values[k]!, scale.at(q));
    if (at >= 0) {
      const frame = state.frames[k]![at]!;
      if (first < 0 || frame < first) first = frame;
    }
  }
  return first;
}

/**
 * A q at which the mean run length is at least the target even if every path that has not passed
 * it ended now (Infinity when there is none yet): the q the full simulation finds is at most it.
 * Bisected on q itself.
 */
export function upperBoundOfParameter(
  states: readonly PathRecords[],
  scales: ReadonlyArray<ThresholdScale | null>,
  targetFrames: number,
): number {
  const lowerMean = (q: number): number => {
    const { passedFrames, runningFrames } = passagesAt(states, scales, q);
    return (passedFrames + runningFrames) / states.length;
  };
  const { lo, hi } = parameterRange(states, scales);
  return bisectParameter(lowerMean, targetFrames, lo, hi);
}

/**
 * Where the paths are likely to put the answer, so a path can wait there instead of running on to
 * the bound: the q at which an exponential run length, fitted to what the paths show at q (its
 * maximum-likelihood mean from the passed and the still-running paths), censored at the paths'
 * length like the simulation, has the wanted mean (by default 5 % above the target). Only the
 * frames depend on it: a path paused past it resumes when the answer proves higher (the loop of
 * false-alarm-threshold.ts checks).
 */
export function estimatedParameter(
  states: readonly PathRecords[],
  scales: ReadonlyArray<ThresholdScale | null>,
  wantedFrames: number,
  pathFrames: number,
): number {
  const predictedMean = (q: number): number => {
    const { passed, passedFrames, runningFrames } = passagesAt(states, scales, q);
    if (passed === 0) return Infinity;
    const mean = (passedFrames + runningFrames) / passed;
    return mean * (1 - Math.exp(-pathFrames / mean));
  };
  const { lo, hi } = parameterRange(states, scales);
  return bisectParameter(predictedMean, wantedFrames, lo, hi);
}

/**
 * At q: the paths whose group has passed its thresholds, the sum of their run lengths, and the
 * frames the others have run (sums of whole frames, exact in any order).
 */
function passagesAt(
  states: readonly PathRecords[],
  scales: ReadonlyArray<ThresholdScale | null>,
  q: number,
): { passed: number; passedFrames: number; runningFrames: number } {
  let passed = 0;
  let passedFrames = 0;
  let runningFrames = 0;
  for (const state of states) {
    const at = groupRunLength(state, scales, q);
    if (at < 0) runningFrames += state.framesDone;
    else {
      passed++;
      passedFrames += at;
    }
  }
  return { passed, passedFrames, runningFrames };
}

/** The group's mean run length at q over the paths, a path without an alarm counted as pathFrames. */
export function meanRunLength(
  states: readonly PathRecords[],
  scales: ReadonlyArray<ThresholdScale | null>,
  q: number,
  pathFrames: number,
): { mean: number; censored: number } {
  const { passedFrames, passed } = passagesAt(states, scales, q);
  const censored = states.length - passed;
  const sum = passedFrames + censored * pathFrames;
  return { mean: sum / states.length, censored };
}

/**
 * The thresholds' parameter: the least record inverse q at which the group's mean run length
 * reaches the target (the last inverse when none does, Infinity when there are no records). The
 * search looks only within `known` first: every q at or below `known.above` fell short with every
 * path known there, and the target is met at `known.atMost`, so the answer lies between, above a
 * q found short of it by bisection. The answer found there is checked, so that it does not hang on
 * the caller's claims: it must meet the target, and the range's low end must fall short (the mean
 * run length changes only at the records' inverses, so every record at or below it then falls
 * short too); otherwise, or when the range holds no record, every record is searched, as the full
 * simulation does.
 */
export function leastParameterReaching(
  states: readonly PathRecords[],
  scales: ReadonlyArray<ThresholdScale | null>,
  known: { above: number; atMost: number },
  targetFrames: number,
  pathFrames: number,
): number {
  const meanAt = (q: number): number => meanRunLength(states, scales, q, pathFrames).mean;
  const short = shortOfTarget(meanAt, targetFrames, parameterRange(states, scales).lo, known.atMost);
  const above = Math.max(known.above, short);
  const candidates = parameterCandidates(states, scales, { above, atMost: known.atMost });
  const q = leastCandidateReaching(states, scales, candidates, targetFrames, pathFrames);
  const belowFallsShort = above === -Infinity || meanAt(above) < targetFrames;
  if (candidates.length > 0 && meanAt(q) >= targetFrames && belowFallsShort) return q;
  const every = parameterCandidates(states, scales, { above: -Infinity, atMost: Infinity });
  return leastCandidateReaching(states, scales, every, targetFrames, pathFrames);
}

/**
 * Every q in (range.above, range.atMost] at which some path's group run length can change: the
 * inverses of the records there. A path's records increase, and so do their inverses, so each
 * path's share is found by bisection: on the hour's u* signal the records number about 255,000,
 * and taking the inverse of every one and sorting them took 80-100 ms, the slower thread's last
 * tenth of a second.
 */
function parameterCandidates(
  states: readonly PathRecords[],
  scales: ReadonlyArray<ThresholdScale | null>,
  range: { above: number; atMost: number },
): Float64Array {
  const candidates: number[] = [];
  scales.forEach((scale, k) => {
    if (scale === null) return;
    for (const state of states) {
      const values = state.values[k]!;
      const from = firstIndexWhere(values.length, (i) => scale.inverse(values[i]!) > range.above);
      const to = firstIndexWhere(values.length, (i) => scale.inverse(values[i]!) > range.atMost);
      for (let i = from; i < to; i++) candidates.push(scale.inverse(values[i]!));
    }
  });
  return Float64Array.from(candidates).sort();
}

/** The q of the lowest and the highest record over the paths (lo > hi when there is none). */
function parameterRange(
  states: readonly PathRecords[],
  scales: ReadonlyArray<ThresholdScale | null>,
): { lo: number; hi: number } {
  let lo = Infinity;
  let hi = -Infinity;
  scales.forEach((scale, k) => {
    if (scale === null) return;
    for (const state of states) {
      const values = state.values[k]!;
      if (values.length === 0) continue;
      lo = Math.min(lo, scale.inverse(values[0]!));
      hi = Math.max(hi, scale.inverse(values[values.length - 1]!));
    }
  });
  return { lo, hi };
}

/**
 * The first of the ascending candidates at which the mean run length reaches the target (it only
 * grows with q), by bisection; the last when none does, Infinity when there are none.
 */
function leastCandidateReaching(
  states: readonly PathRecords[],
  scales: ReadonlyArray<ThresholdScale | null>,
  candidates: Float64Array,
  targetFrames: number,
  pathFrames: number,
): number {
  let lo = 0;
  let hi = candidates.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (meanRunLength(states, scales, candidates[mid]!, pathFrames).mean >= targetFrames) hi = mid;
    else lo = mid + 1;
  }
  return candidates.length === 0 ? Infinity : candidates[hi]!;
}

/** The index of the first record above the threshold (records increase), or -1. */
function firstAbove(values: ArrayLike<number>, threshold: number): number {
  const at = countAtMost(values, threshold);
  return at < values.length ? at : -1;
}
