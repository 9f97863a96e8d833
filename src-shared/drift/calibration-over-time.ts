import { KnobError } from '../errors';
import { topLabelBinnedMetrics } from '../metrics/binned-metrics';
import { percentileIntervalContaining } from '../metrics/bootstrap';
import { binningIdentity, type EqualWidthSpec } from '../metrics/binning';
import { seededRandom, type RandomSource } from '../random';
import type { GateSettings } from '../gate/gate-settings';
import { gateTrajectory } from '../trace/replay';
import { topLabelTraceScores } from '../trace/top-label-trace-scores';
import { labelledFrames } from '../trace/trace-scores';
import type { Trace } from '../trace/trace';
import { BlockBootstrapStream, blockFramesFor } from './block-bootstrap';

export const OVER_TIME_BINNING: EqualWidthSpec = { scheme: 'equal-width', bins: 15, edgeRule: 'left-closed' };

export const OVER_TIME_METRICS = {
  accuracy: 'accuracy (top-1)',
  ece: `ECE(top-label, ${binningIdentity(OVER_TIME_BINNING)}, L1)`,
  nll: 'NLL (mean -ln p of the true class, natural log)',
  brier: 'Brier (mean sum over classes of (p_k - 1[y = k])^2)',
} as const;
export type OverTimeMetric = keyof typeof OVER_TIME_METRICS;
const METRIC_NAMES = Object.keys(OVER_TIME_METRICS) as OverTimeMetric[];

export interface OverTimeWindow {
  firstFrame: number;
  /** One past the last frame. */
  endFrame: number;
  labelledFrames: number;
  /** Each metric on the window's labelled frames, with a moving-block bootstrap interval (null: too few labels). */
  values: Array<{ metric: OverTimeMetric; value: number; low: number; high: number } | null>;
}

export interface ChangePoint {
  /** The first frame after the change. */
  frame: number;
  /** Accuracy of the labelled frames before and after it, within its segment. */
  accuracyBefore: number;
  accuracyAfter: number;
  /** The split's likelihood-ratio statistic and the share of null resamples that reached it. */
  statistic: number;
  pValue: number;
}

export interface CalibrationOverTime {
  windows: OverTimeWindow[];
  changePoints: ChangePoint[];
  changePointMethod: string;
  /** Set on a kept-class trace: its figures are the kept-class estimates. */
  approximation?: string;
}

export interface OverTimeOptions {
  windowFrames: number;
  strideFrames: number;
  replicates: number;
  seed: number;
  /** Labelled frames a window or a segment needs (fewer: no figures, no split). */
  minLabelled?: number;
  /** Significance of each split of the binary segmentation. */
  alpha?: number;
}

const DEFAULT_MIN_LABELLED = 30;
/** Windows and resampled frames a call computes at most: past them it would run for minutes. */
export const MAX_WINDOWS = 5000;
export const MAX_RESAMPLED_FRAMES = 4e8;
const NULL_RESAMPLES = 199;
const MAX_CHANGE_POINTS = 10;

/**
 * Calibration over time: accuracy, ECE, NLL and Brier of the output at the knobs over sliding
 * windows of frames (each on its labelled frames, with a 95 % moving-block bootstrap interval: a
 * stream's frames are not independent), and the change points of its accuracy: binary
 * segmentation of the labelled frames' correctness, each split the most likely single change of a
 * Bernoulli mean (likelihood ratio), kept when fewer than `alpha` of 199 moving-block resamples of
 * its segment (which scramble the order beyond a block, and so any change) reach its statistic.
 */
export function calibrationOverTime(
  trace: Trace,
  settings: GateSettings,
  options: OverTimeOptions,
): CalibrationOverTime {
  const minLabelled = options.minLabelled ?? DEFAULT_MIN_LABELLED;
  const windowCount = Math.ceil(Math.max(1, trace.frameCount - options.windowFrames) / options.strideFrames) + 1;
  const resampled = windowCount * Math.min(options.windowFrames, trace.frameCount) * options.replicates;
  if (windowCount > MAX_WINDOWS || resampled > MAX_RESAMPLED_FRAMES)
    throw new KnobError(
      'INVALID_INPUT',
      `${windowCount} windows of ${options.windowFrames} frames with ${options.replicates} replicates is more than calibration ` +
        `over time computes at once (${MAX_WINDOWS} windows, ${MAX_RESAMPLED_FRAMES.toExponential(0)} resampled frames): use a longer stride or fewer replicates`,
    );
  const frames = labelledFrames(trace);
  const { scores, top, kept } = topLabelTraceScores(trace, gateTrajectory(trace, settings), frames);
  const random = seededRandom(options.seed);
  const windows: OverTimeWindow[] = [];
  let lo = 0;
  let hi = 0;
  for (let start = 0; start < trace.frameCount; start += options.strideFrames) {
    const end = Math.min(trace.frameCount, start + options.windowFrames);
    while (lo < frames.length && frames[lo]! < start) lo++;
    while (hi < frames.length && frames[hi]! < end) hi++;
    const count = hi - lo;
    windows.push({
      firstFrame: start,
      endFrame: end,
      labelledFrames: count,
      values:
        count < minLabelled
          ? METRIC_NAMES.map(() => null)
          : windowValues(
              { confidence: top.confidence, correct: top.correct, nll: scores.sampleNll!, brier: scores.sampleBrier! },
              lo,
              hi,
              options.replicates,
              random,
            ),
    });
    if (end === trace.frameCount) break;
  }
  const alpha = options.alpha ?? 0.01;
  return {
    windows,
    changePoints: changePointsOf(top.correct, frames, minLabelled, alpha, random),
    changePointMethod:
      `binary segmentation of the labelled frames' top-1 correctness (Bernoulli likelihood ratio), each split kept at ` +
      `p < ${alpha} against ${NULL_RESAMPLES} moving-block resamples of its segment, segments of at least ${minLabelled} labelled frames, at most ${MAX_CHANGE_POINTS} changes`,
    ...(kept === undefined
      ? {}
      : {
          approximation: `a kept-class trace (${kept.keep} of ${kept.classCount} classes a frame): its figures are the kept-class estimates`,
        }),
  };
}

interface FrameTerms {
  confidence: Float64Array;
  correct: Uint8Array;
  nll: Float64Array;
  brier: Float64Array;
}

function metricsOf(terms: FrameTerms, rows: ArrayLike<number>): Record<OverTimeMetric, number> {
  const n = rows.length;
  const confidence = new Float64Array(n);
  const correct = new Uint8Array(n);
  let right = 0;
  let nll = 0;
  let brier = 0;
  for (let j = 0; j < n; j++) {
    const r = rows[j]!;
    confidence[j] = terms.confidence[r]!;
    correct[j] = terms.correct[r]!;
    right += correct[j]!;
    nll += terms.nll[r]!;
    brier += terms.brier[r]!;
  }
  const ece = topLabelBinnedMetrics({ confidence, correct, predicted: new Int32Array(n) }, OVER_TIME_BINNING).find(
    (m) => m.name === 'ECE',
  )!.value;
  return { accuracy: right / n, ece, nll: nll / n, brier: brier / n };
}

function windowValues(
  terms: FrameTerms,
  lo: number,
  hi: number,
  replicates: number,
  random: RandomSource,
): OverTimeWindow['values'] {
  const rows = Int32Array.from({ length: hi - lo }, (_, j) => lo + j);
  const point = metricsOf(terms, rows);
  const draws = new BlockBootstrapStream(
    Float64Array.from(rows),
    blockFramesFor(terms.confidence.subarray(lo, hi)),
    random,
  );
  const replicated = METRIC_NAMES.map(() => new Float64Array(replicates));
  const resampled = new Int32Array(rows.length);
  for (let r = 0; r < replicates; r++) {
    for (let j = 0; j < rows.length; j++) resampled[j] = draws.next();
    const values = metricsOf(terms, resampled);
    METRIC_NAMES.forEach((m, i) => (replicated[i]![r] = values[m]));
  }
  return METRIC_NAMES.map((metric, i) => ({
    metric,
    value: point[metric],
    ...percentileIntervalContaining(replicated[i]!, point[metric]),
  }));
}

/** The most likely single change of a Bernoulli mean in correct[lo, hi): its split and statistic. */
function bestSplit(
  correct: ArrayLike<number>,
  lo: number,
  hi: number,
  minSegment: number,
): { at: number; statistic: number } {
  const n = hi - lo;
  let total = 0;
  for (let i = lo; i < hi; i++) total += correct[i]!;
  const logLikelihood = (k: number, m: number) =>
    (k > 0 ? k * Math.log(k / m) : 0) + (m - k > 0 ? (m - k) * Math.log((m - k) / m) : 0);
  const whole = logLikelihood(total, n);
  let best = { at: -1, statistic: 0 };
  let left = 0;
  for (let i = lo; i < hi - 1; i++) {
    left += correct[i]!;
    const m = i + 1 - lo;
    if (m < minSegment || n - m < minSegment) continue;
    const statistic = 2 * (logLikelihood(left, m) + logLikelihood(total - left, n - m) - whole);
    if (statistic > best.statistic) best = { at: i + 1, statistic };
  }
  return best;
}

function changePointsOf(
  correct: Uint8Array,
  frames: Int32Array,
  minSegment: number,
  alpha: number,
  random: RandomSource,
): ChangePoint[] {
  const found: ChangePoint[] = [];
  const segments: Array<[number, number]> = [[0, correct.length]];
  while (segments.length > 0 && found.length < MAX_CHANGE_POINTS) {
    const [lo, hi] = segments.shift()!;
    if (hi - lo < 2 * minSegment) continue;
    const split = bestSplit(correct, lo, hi, minSegment);
    if (split.at < 0) continue;
    const segment = Float64Array.from(correct.subarray(lo, hi));
    const draws = new BlockBootstrapStream(segment, blockFramesFor(segment), random);
    const resample = new Float64Array(segment.length);
    let reached = 0;
    for (let r = 0; r < NULL_RESAMPLES; r++) {
      for (let j = 0; j < segment.length; j++) resample[j] = draws.next();
      if (bestSplit(resample, 0, resample.length, minSegment).statistic >= split.statistic) reached++;
    }
    const pValue = (reached + 1) / (NULL_RESAMPLES + 1);
    if (pValue >= alpha) continue;
    let before = 0;
    for (let i = lo; i < split.at; i++) before += correct[i]!;
    let after = 0;
    for (let i = split.at; i < hi; i++) after += correct[i]!;
    found.push({
      frame: frames[split.at]!,
      accuracyBefore: before / (split.at - lo),
      accuracyAfter: after / (hi - split.at),
      statistic: split.statistic,
      pValue,
    });
    segments.push([lo, split.at], [split.at, hi]);
  }
  return found.sort((a, b) => a.frame - b.frame);
}
