/**
 * The feature-MMD drift signal (feature-mmd.ts) against its analytic mean: on iid Gaussian features
 * of sd c_j, N(0, diag c^2) on the reference and shifted by c_j delta_j after it, the mean of the
 * linear-time MMD terms is the squared MMD of the two Gaussians under the Gaussian kernel on the
 * features standardised by the reference's sd s_j:
 *   E exp(-gamma |z|^2) = prod_j (1 + 2 gamma v_j)^(-1/2) exp(-gamma sum_j m_j^2 / (1 + 2 gamma v_j))
 * for z ~ N(m, diag v); for the difference of two standardised frames v_j = 2 c_j^2 / s_j^2, and
 * m_j = c_j delta_j / s_j between a shifted frame and a reference one, so
 *   MMD^2 = 2 prod_j (1 + 2 gamma v_j)^(-1/2) (1 - exp(-gamma sum_j m_j^2 / (1 + 2 gamma v_j))),
 * and 0 before the shift. The sds differ by feature, so a kernel that skipped the standardisation
 * would miss the closed form. The live watch's per-frame arithmetic gives the same values bit for bit.
 */
import { describe, expect, it } from 'vitest';
import { featureMmdReferenceOf, frameDraw } from '../../src-shared/drift/feature-mmd';
import {
  featureReferenceOf,
  featureSignalReferences,
  frameSignals,
  frameSignalScratch,
  frameSignalsAt,
} from '../../src-shared/drift/frame-signals';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { normalDraw, seededRandom } from '../../src-shared/random';
import { syntheticTrace } from '../support/synthetic-trace';

const WIDTH = 4;
const REFERENCE = 4000;
const FRAMES = 24_000;
const DELTA = [0.8, 0, -0.4, 0];
/** Each feature's sd (c_j). */
const SCALE = [3, 1, 0.5, 1];

function shiftedStream() {
  const random = seededRandom(23);
  const values = new Float32Array(FRAMES * WIDTH);
  for (let i = 0; i < FRAMES; i++)
    for (let j = 0; j < WIDTH; j++)
      values[i * WIDTH + j] = SCALE[j]! * (normalDraw(random) + (i >= REFERENCE ? DELTA[j]! : 0));
  return { ...syntheticTrace({ frames: FRAMES, classCount: 3, seed: 4 }), features: { width: WIDTH, values } };
}

/** The mean of values[from, to) and its standard error. */
function meanAndError(values: Float64Array, from: number, to: number) {
  const n = to - from;
  let mean = 0;
  for (let i = from; i < to; i++) mean += values[i]!;
  mean /= n;
  let squares = 0;
  for (let i = from; i < to; i++) squares += (values[i]! - mean) ** 2;
  return { mean, error: Math.sqrt(squares / (n - 1) / n) };
}

describe('the feature-MMD signal', () => {
  const trace = shiftedStream();
  const reference = { start: 0, end: REFERENCE };
  const [signal] = frameSignals(trace, DEFAULT_GATE_SETTINGS, ['feature-mmd'], reference);
  const { sd, gamma } = featureMmdReferenceOf(trace, reference, featureReferenceOf(trace, reference));

  it('has the squared MMD of the two Gaussians as its mean after the shift, and 0 before it', () => {
    let product = 1;
    let exponent = 0;
    for (let j = 0; j < WIDTH; j++) {
      const spread = 1 + (2 * gamma * 2 * SCALE[j]! ** 2) / sd[j]! ** 2;
      product /= Math.sqrt(spread);
      exponent += (gamma * ((SCALE[j]! * DELTA[j]!) / sd[j]!) ** 2) / spread;
    }
    const mmdSquared = 2 * product * (1 - Math.exp(-exponent));
    const after = meanAndError(signal!.values, REFERENCE + 1, FRAMES);
    const before = meanAndError(signal!.values, 1, REFERENCE);
    expect(Math.abs(after.mean - mmdSquared)).toBeLessThan(4 * after.error);
    expect(Math.abs(before.mean)).toBeLessThan(4 * before.error);
    // the shift is seen: many standard errors above 0
    expect(after.mean).toBeGreaterThan(10 * after.error);
  });

  it("takes the bandwidth from the reference's median distance, finite on constant features", () => {
    // sigma^2 = 1 / (2 gamma): for N(0, I) in 4 dimensions the squared distance is 2 chi^2_4, median about 6.7
    expect(1 / (2 * gamma)).toBeGreaterThan(5.5);
    expect(1 / (2 * gamma)).toBeLessThan(8);
    const constant = { ...trace, features: { width: WIDTH, values: new Float32Array(FRAMES * WIDTH) } };
    const [flat] = frameSignals(constant, DEFAULT_GATE_SETTINGS, ['feature-mmd'], reference);
    expect(flat!.values.every((v) => v === 0)).toBe(true);
    expect(() => frameSignals(trace, DEFAULT_GATE_SETTINGS, ['feature-mmd'], { start: 0, end: 3 })).toThrow(
      /at least 4 frames/,
    );
  });

  it("gives a live watch's frames the same values as the offline monitor, bit for bit", () => {
    const scratch = frameSignalScratch(trace.classCount, featureSignalReferences(trace, ['feature-mmd'], reference));
    const out = new Float64Array(1);
    for (const i of [0, 1, 17, REFERENCE - 1, REFERENCE, FRAMES - 1]) {
      frameSignalsAt(trace, i, i, 0.5, ['feature-mmd'], out, scratch);
      expect(out[0]).toBe(signal!.values[i]);
    }
  });

  it('draws reference frames from the index alone, spread over the reference', () => {
    const counts = new Int32Array(10);
    for (let i = 0; i < 100_000; i++) counts[frameDraw(i, 1) % 10]!++;
    counts.forEach((c) => expect(Math.abs(c - 10_000)).toBeLessThan(500));
    expect(frameDraw(5, 1)).toBe(frameDraw(5, 1));
    expect(frameDraw(5, 1)).not.toBe(frameDraw(5, 2));
  });
});
