import { KnobError } from '../errors';
import type { Trace } from '../trace/trace';
import type { FeatureReference } from './frame-signals';

/**
 * The feature-MMD drift signal (issue 30): each frame's term of the linear-time MMD estimator
 * (Gretton, Borgwardt, Rasch, Schoelkopf and Smola, "A kernel two-sample test", JMLR 2012, section
 * 6), which pairs two draws of the stream with two of the reference,
 *   h_t = k(x_t, x_{t-1}) + k(r_a, r_b) - k(x_t, r_b) - k(x_{t-1}, r_a),
 * its mean over iid draws the squared MMD of the two distributions. k is the Gaussian kernel on the
 * features standardised by the reference's sd, k(x, y) = exp(-|x - y|^2 / (2 sigma^2)), sigma the
 * median distance between reference frames (the median heuristic, Gretton et al. 2012, section 8);
 * r_a and r_b are reference frames drawn from the frame's index alone (so a live watch and an
 * offline monitor of the same frames draw the same ones), never x_t or x_{t-1} themselves.
 *
 * A stream's consecutive frames are not independent: k(x_t, x_{t-1}) of a steady camera sits near 1,
 * so h_t's level on unshifted data is not 0. The monitor takes the signal as it comes: its
 * detectors' thresholds are calibrated on the signal over the reference window, computed the same
 * way (false-alarm-threshold.ts), and a CUSUM of h_t is a sequential test of the features' MMD from
 * the reference's, at the false-alarm rate the operator sets.
 */
export interface FeatureMmdReference {
  /** Each feature's reference sd (featureReferenceOf; 0 read as 1). */
  sd: Float64Array;
  /** The reference frames [start, end) the kernel's second pair is drawn from. */
  start: number;
  end: number;
  /** 1 / (2 sigma^2), sigma the median distance between reference frames (standardised features). */
  gamma: number;
}

/** Pairs of reference frames the median distance is taken over. */
const BANDWIDTH_PAIRS = 1000;
/** The fewest reference frames: two drawn, besides the frame and the one before it. */
export const MIN_MMD_REFERENCE_FRAMES = 4;

/** A 32-bit mix of an index and a salt (splitmix32's finaliser): the frame's reference draws. */
export function frameDraw(index: number, salt: number): number {
  let z = (Math.imul(index, 0x9e3779b9) + Math.imul(salt, 0x85ebca6b)) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
  z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
  return (z ^ (z >>> 15)) >>> 0;
}

/** The squared distance of frames i and j's features, each feature divided by its reference sd. */
function standardisedDistanceSquared(values: Float32Array, width: number, sd: Float64Array, i: number, j: number) {
  let sum = 0;
  const a = i * width;
  const b = j * width;
  for (let f = 0; f < width; f++) {
    const d = (values[a + f]! - values[b + f]!) / sd[f]!;
    sum += d * d;
  }
  return sum;
}

/** The kernel's reference: its standardisation and bandwidth from the reference frames [start, end). */
export function featureMmdReferenceOf(
  trace: Trace,
  reference: { start: number; end: number },
  standardisation: FeatureReference,
): FeatureMmdReference {
  const { start, end } = reference;
  const n = end - start;
  if (n < MIN_MMD_REFERENCE_FRAMES)
    throw new KnobError(
      'INVALID_INPUT',
      `the feature-MMD signal needs a reference window of at least ${MIN_MMD_REFERENCE_FRAMES} frames, got ${n}`,
    );
  const { width, values } = trace.features!;
  const distances = new Float64Array(BANDWIDTH_PAIRS);
  for (let p = 0; p < BANDWIDTH_PAIRS; p++) {
    const i = start + (frameDraw(p, 11) % n);
    const j = start + ((i - start + 1 + (frameDraw(p, 13) % (n - 1))) % n); // never i
    distances[p] = Math.sqrt(standardisedDistanceSquared(values, width, standardisation.sd, i, j));
  }
  distances.sort();
  const median = (distances[BANDWIDTH_PAIRS / 2 - 1]! + distances[BANDWIDTH_PAIRS / 2]!) / 2;
  // every reference frame alike: any bandwidth gives k = 1 throughout, a constant signal
  return { sd: standardisation.sd, start, end, gamma: median > 0 ? 1 / (2 * median * median) : 1 };
}

/** Frame i's term h_i (above); the frame before the first is the first itself. */
export function featureMmdTermAt(trace: Trace, i: number, reference: FeatureMmdReference): number {
  const { width, values } = trace.features!;
  const { sd, start, end, gamma } = reference;
  const n = end - start;
  const previous = i > 0 ? i - 1 : 0;
  // two reference frames drawn from i, moved off the frame and the one before it
  const drawn = (salt: number, avoid: number) => {
    let r = start + (frameDraw(i, salt) % n);
    while (r === i || r === previous || r === avoid) r = start + ((r - start + 1) % n);
    return r;
  };
  const a = drawn(1, -1);
  const b = drawn(2, a);
  const k = (x: number, y: number) => Math.exp(-gamma * standardisedDistanceSquared(values, width, sd, x, y));
  return k(i, previous) + k(a, b) - k(i, b) - k(previous, a);
}
