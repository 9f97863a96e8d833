import { KnobError } from '../errors';
import { clampGate, fuseTop1Into } from '../fusion/convex-fusion';
import { argmaxRow } from '../fusion/logits';
import type { GateSettings } from '../gate/gate-settings';
import { replay } from '../trace/replay';
import type { Trace } from '../trace/trace';
import type { MonitorSignal } from './monitor';
import { featureMmdReferenceOf, featureMmdTermAt, type FeatureMmdReference } from './feature-mmd';

/** What every frame has, labelled or not: the signals a drift monitor can watch. */
export const FRAME_SIGNALS = {
  confidence: "the output's top-1 probability at the knobs (fused; a kept-class trace's estimate)",
  'gate-target': 'u*, the gate target the model gives the frame',
  gate: 'g, the gate at the knobs (clamped to [0, 1])',
  disagreement: "1 where the static and dynamic branches' top-1 differ, else 0 (every class only)",
  'feature-shift':
    "the root mean square of the frame's features standardised by the reference's mean and sd of each (a recording with features only)",
  'feature-mmd':
    "the frame's term of the linear-time MMD of the features from the reference's (Gretton et al. 2012; Gaussian kernel, median-distance bandwidth; a recording with features only)",
} as const;
export type FrameSignal = keyof typeof FRAME_SIGNALS;
/** The signals read from the model's features: a recording without them cannot give them. */
export const FEATURE_SIGNALS: readonly FrameSignal[] = ['feature-shift', 'feature-mmd'];
export const FRAME_SIGNAL_NAMES = Object.keys(FRAME_SIGNALS) as FrameSignal[];
/** What a monitor watches unless told otherwise (the desk and `knob monitor`): what the output says, and u*. */
export const DEFAULT_FRAME_SIGNALS: readonly FrameSignal[] = ['confidence', 'gate-target'];

/**
 * The chosen per-frame signals of a recording at the knobs, by one replay of the gate and the
 * fusion (replay.ts, the kernel every view uses). A kept-class trace gives the confidence as its
 * kept-class estimate and has no disagreement signal (a branch's top-1 may lie outside its kept
 * classes): asked for, it is refused by name.
 */
export function frameSignals(
  trace: Trace,
  settings: GateSettings,
  names: readonly FrameSignal[],
  /** The reference frames [start, end): the feature signals are measured from their features. */
  reference: { start: number; end: number } | null = null,
): MonitorSignal[] {
  const n = trace.frameCount;
  const { features, mmd } = featureSignalReferences(trace, names, reference);
  const replayed = names.some((name) => name === 'confidence' || name === 'gate')
    ? replay(trace, settings, { logits: 'kept classes too' })
    : null;
  return names.map((name) => {
    const values = new Float64Array(n);
    if (name === 'confidence') values.set(replayed!.confidence);
    else if (name === 'gate') for (let i = 0; i < n; i++) values[i] = clampGate(replayed!.g[i]!);
    else if (name === 'gate-target') values.set(trace.uRef);
    else if (name === 'feature-shift')
      for (let i = 0; i < n; i++) values[i] = featureShiftAt(trace.features!, i, features!);
    else if (name === 'feature-mmd')
      for (let i = 0; i < n; i++) values[i] = featureMmdTermAt(trace.features!, i, i, mmd!);
    else {
      if (trace.keptClasses !== undefined)
        throw new KnobError(
          'INVALID_INPUT',
          `the disagreement signal needs every class of both branches; this trace keeps ${trace.keptClasses.keep} of ${trace.classCount} a frame`,
        );
      values.set(branchDisagreement(trace, 0, n));
    }
    return { name, values };
  });
}

/**
 * What the watched feature signals read of the reference frames: the features' statistics (either
 * signal) and the feature-MMD kernel's reference; null for what is not watched.
 */
export function featureSignalReferences(
  trace: Trace,
  names: readonly FrameSignal[],
  reference: { start: number; end: number } | null,
): { features: FeatureReference | null; mmd: FeatureMmdReference | null } {
  const features = names.some((name) => FEATURE_SIGNALS.includes(name)) ? featureReferenceOf(trace, reference) : null;
  const mmd = names.includes('feature-mmd') ? featureMmdReferenceOf(trace, reference!, features!) : null;
  return { features, mmd };
}

/** Each feature's mean and sd over the reference frames (an sd of 0 taken as 1: that feature then adds its raw move). */
export interface FeatureReference {
  mean: Float64Array;
  sd: Float64Array;
}

/** The reference's feature statistics, or the typed refusal of a recording without features or a reference. */
export function featureReferenceOf(trace: Trace, reference: { start: number; end: number } | null): FeatureReference {
  const features = trace.features;
  if (features === undefined)
    throw new KnobError(
      'INVALID_INPUT',
      "the feature signals (feature-shift, feature-mmd) need the model's features of every frame: record them (the Source panel's option, knob run --record-features)",
    );
  if (reference === null || reference.end - reference.start < 2)
    throw new KnobError('INVALID_INPUT', 'the feature signals need a reference window of at least 2 frames');
  const { width, values } = features;
  const mean = new Float64Array(width);
  const sd = new Float64Array(width);
  const count = reference.end - reference.start;
  for (let i = reference.start; i < reference.end; i++)
    for (let j = 0; j < width; j++) {
      const value = values[i * width + j]!;
      // one NaN would spread into every later term that reads this frame, and a CUSUM never recovers
      if (!Number.isFinite(value))
        throw new KnobError('INVALID_INPUT', `feature ${j} of reference frame ${i} is not finite (${value})`);
      mean[j] += value;
    }
  for (let j = 0; j < width; j++) mean[j] /= count;
  for (let i = reference.start; i < reference.end; i++)
    for (let j = 0; j < width; j++) sd[j] += (values[i * width + j]! - mean[j]!) ** 2;
  for (let j = 0; j < width; j++) {
    const s = Math.sqrt(sd[j]! / (count - 1));
    sd[j] = s > 0 ? s : 1;
  }
  return { mean, sd };
}

/** A frame's feature shift, its features at `row` of `features`: sqrt(mean_j ((x_j - mean_j) / sd_j)^2). */
export function featureShiftAt(
  features: { width: number; values: Float32Array },
  row: number,
  reference: FeatureReference,
): number {
  const { width, values } = features;
  let sum = 0;
  for (let j = 0; j < width; j++) {
    const z = (values[row * width + j]! - reference.mean[j]!) / reference.sd[j]!;
    sum += z * z;
  }
  return Math.sqrt(sum / width);
}

/** Buffers frameSignalsAt works in, made once a stream (nothing is allocated a frame but two views). */
export interface FrameSignalScratch {
  gate: Float64Array;
  top1: Int32Array;
  confidence: Float64Array;
  row: Float64Array;
  /** The reference's feature statistics, when a feature signal is watched. */
  features: FeatureReference | null;
  /** The feature-MMD kernel's reference, when that signal is watched. */
  mmd: FeatureMmdReference | null;
}

export function frameSignalScratch(
  classCount: number,
  { features, mmd }: Pick<FrameSignalScratch, 'features' | 'mmd'> = { features: null, mmd: null },
): FrameSignalScratch {
  return {
    gate: new Float64Array(1),
    top1: new Int32Array(1),
    confidence: new Float64Array(1),
    row: new Float64Array(classCount),
    features,
    mmd,
  };
}

/**
 * Per-frame columns as frameSignalsAt reads them: a whole trace (frame i at row i), or the frames a
 * live watch's thread is sent (live-watch-worker.ts), from the frame before the first on. Every class.
 */
export type FrameRows = Pick<Trace, 'classCount' | 'zStatic' | 'zDyn' | 'uRef' | 'features'>;

/**
 * Frame i's signals, its columns at `row` of `rows` (the frame before it at row - 1) and the gate at
 * it `g` (unclamped), into `out` in the order of `names`: what a live watch reads as each frame is
 * recorded. The same arithmetic as frameSignals: the confidence is the fused output's (replay's
 * fuseTop1Into on that one row, no output calibrator), so a live watch and an offline monitor of the
 * same frames see the same values bit for bit.
 */
export function frameSignalsAt(
  rows: FrameRows,
  row: number,
  i: number,
  g: number,
  names: readonly FrameSignal[],
  out: Float64Array,
  scratch: FrameSignalScratch,
): void {
  const k = rows.classCount;
  names.forEach((name, s) => {
    if (name === 'gate-target') out[s] = rows.uRef[row]!;
    else if (name === 'gate') out[s] = clampGate(g);
    else if (name === 'feature-shift') out[s] = featureShiftAt(rows.features!, row, scratch.features!);
    else if (name === 'feature-mmd') out[s] = featureMmdTermAt(rows.features!, row, i, scratch.mmd!);
    else if (name === 'disagreement')
      out[s] = argmaxRow(rows.zStatic, row * k, k) === argmaxRow(rows.zDyn, row * k, k) ? 0 : 1;
    else {
      scratch.gate[0] = g;
      const offset = row * k;
      fuseTop1Into(
        rows.zStatic.subarray(offset, offset + k),
        rows.zDyn.subarray(offset, offset + k),
        scratch.gate,
        k,
        0,
        1,
        scratch.top1,
        scratch.confidence,
        null,
        scratch.row,
      );
      out[s] = scratch.confidence[0]!;
    }
  });
}

/** 1 for each frame of [start, end) where the static and dynamic branches' top-1 differ (every class). */
export function branchDisagreement(trace: Trace, start: number, end: number): Uint8Array {
  const k = trace.classCount;
  const out = new Uint8Array(end - start);
  for (let i = start; i < end; i++)
    out[i - start] = argmaxRow(trace.zStatic, i * k, k) === argmaxRow(trace.zDyn, i * k, k) ? 0 : 1;
  return out;
}
