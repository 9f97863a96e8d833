import { KnobError } from '../errors';
import type { Trace } from '../trace/trace';
import type { FeatureReference } from './frame-signals';

/**
 * The feature-MMD drift signal (issue 30): the term of the linear-time MMD estimator (Gretton,
 * Borgwardt, Rasch, Schoelkopf and Smola, "A kernel two-sample test", JMLR 2012, section 6) at each
 * frame, pairing the frame and the one before it with two frames of the reference,
 *   h_t = k(x_t, x_{t-1}) + k(r_a, r_b) - k(x_t, r_b) - k(x_{t-1}, r_a),
 * whose mean over independent draws is the squared MMD of the two distributions (the estimator
 * proper uses disjoint pairs; here each frame enters two consecutive terms). k is the Gaussian kernel
 * on the features standardised by the reference's sd, k(x, y) = exp(-|x - y|^2 / (2 sigma^2)),
 * sigma the median distance between reference frames (the median heuristic, Gretton et al. 2012,
 * section 8). r_a and r_b are reference frames drawn from the frame's index alone (so a live watch
 * and an offline monitor of the same frames draw the same ones), at least NEIGHBOUR_FRAMES away
 * from x_t and x_{t-1}, so a frame inside the reference is not compared with its own neighbours.
 *
 * A stream's consecutive frames are not independent: there E h_t = MMD^2 + (E k(x_t, x_{t-1}) -
 * E k(x, x')), the second part how much more alike consecutive frames are than independent ones
 * (near its largest for a steady camera). The monitor tests for a change of E h_t, its detectors'
 * thresholds calibrated on the signal over the reference window computed the same way
 * (false-alarm-threshold.ts): a change of the features' distribution moves it by the change of
 * MMD^2, and a change of how alike consecutive frames are (noise lowers it) moves it too, either way.
 */
export interface FeatureMmdReference {
  /** Each feature's reference sd (featureReferenceOf; 0 read as 1). */
  sd: Float64Array;
  /** 1 / sd: a multiplication a feature where the distance loop runs four times a frame. */
  inverseSd: Float64Array;
  /** The reference frames [start, end) the kernel's second pair is drawn from. */
  start: number;
  end: number;
  /**
   * Their features, row r being frame start + r: a view of the trace's, or a copy where the frames
   * are stepped elsewhere (a live watch's thread).
   */
  values: Float32Array;
  /** 1 / (2 sigma^2), sigma the median distance between reference frames (standardised features). */
  gamma: number;
}

/** Pairs of reference frames the median distance is taken over. */
const BANDWIDTH_PAIRS = 1000;
/** A reference frame this close to the frame or the one before it is drawn again (a second at 30 fps). */
export const NEIGHBOUR_FRAMES = 30;
/** Draws before a reference too short to keep away from the neighbours takes the nearest other frame. */
const MAX_DRAWS = 16;
/** The fewest reference frames: two drawn, besides the frame and the one before it. */
export const MIN_MMD_REFERENCE_FRAMES = 4;

/** A 32-bit mix of an index and a salt (splitmix32's finaliser): the frame's reference draws. */
export function frameDraw(index: number, salt: number): number {
  let z = (Math.imul(index, 0x9e3779b9) + Math.imul(salt, 0x85ebca6b)) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
  z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
  return (z ^ (z >>> 15)) >>> 0;
}

/** The squared distance of row i of `x` and row j of `y`, each feature divided by its reference sd. */
function standardisedDistanceSquared(
  x: Float32Array,
  i: number,
  y: Float32Array,
  j: number,
  width: number,
  inverseSd: Float64Array,
) {
  let sum = 0;
  const a = i * width;
  const b = j * width;
  for (let f = 0; f < width; f++) {
    const d = (x[a + f]! - y[b + f]!) * inverseSd[f]!;
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
  const inverseSd = standardisation.sd.map((s) => 1 / s);
  const distances = new Float64Array(BANDWIDTH_PAIRS);
  for (let p = 0; p < BANDWIDTH_PAIRS; p++) {
    const i = start + (frameDraw(p, 11) % n);
    const j = start + ((i - start + 1 + (frameDraw(p, 13) % (n - 1))) % n); // never i
    distances[p] = Math.sqrt(standardisedDistanceSquared(values, i, values, j, width, inverseSd));
  }
  distances.sort();
  // the median of the distances that are not 0: a source that repeats frames would otherwise make
  // the bandwidth 0 (every reference frame alike gives k = 1 throughout, a constant signal)
  const distinct = distances.subarray(distances.findIndex((d) => d > 0));
  const m = distinct.length;
  const median =
    distances[BANDWIDTH_PAIRS - 1] === 0
      ? 0
      : m % 2 === 1
        ? distinct[(m - 1) / 2]!
        : (distinct[m / 2 - 1]! + distinct[m / 2]!) / 2;
  return {
    sd: standardisation.sd,
    inverseSd,
    start,
    end,
    values: values.subarray(start * width, end * width),
    gamma: median > 0 ? 1 / (2 * median * median) : 1,
  };
}

/**
 * A reference frame for frame i's term, drawn from i and `salt`: drawn again while it lies within
 * NEIGHBOUR_FRAMES of i (and so of i - 1) or is `avoid`; a reference too short for that takes, after
 * MAX_DRAWS, the next frame that is neither i, i - 1 nor `avoid` (one exists: it holds 4 or more).
 */
function referenceDraw(i: number, salt: number, avoid: number, start: number, n: number): number {
  for (let draw = 0; draw < MAX_DRAWS; draw++) {
    const r = start + (frameDraw(i, salt + 2 * draw) % n);
    if (r !== avoid && (r > i + NEIGHBOUR_FRAMES || r < i - 1 - NEIGHBOUR_FRAMES)) return r;
  }
  let r = start + (frameDraw(i, salt) % n);
  while (r === i || r === i - 1 || r === avoid) r = start + ((r - start + 1) % n);
  return r;
}

/**
 * Frame i's term h_i (above), its features at `row` of `features` and the frame before's at row - 1;
 * the first frame, with no frame before it, gives 0.
 */
export function featureMmdTermAt(
  features: { width: number; values: Float32Array },
  row: number,
  i: number,
  reference: FeatureMmdReference,
): number {
  if (i === 0) return 0;
  const { width, values } = features;
  const { inverseSd, start, end, gamma } = reference;
  const r = reference.values;
  const a = referenceDraw(i, 1, -1, start, end - start) - start;
  const b = referenceDraw(i, 2, a + start, start, end - start) - start;
  const k = (x: Float32Array, xRow: number, y: Float32Array, yRow: number) =>
    Math.exp(-gamma * standardisedDistanceSquared(x, xRow, y, yRow, width, inverseSd));
  return k(values, row, values, row - 1) + k(r, a, r, b) - k(values, row, r, b) - k(values, row - 1, r, a);
}
