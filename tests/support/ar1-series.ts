import { normalDraw, seededRandom } from '../../src-shared/random';

/**
 * A seeded AR(1) series, x_t = phi x_{t-1} + sqrt(1 - phi^2) e_t: unit variance, autocorrelation
 * phi^lag; from frame `shiftFrom` on, `shiftSd` is added (a shift in the mean, in sd).
 */
export function ar1(frames: number, phi: number, seed: number, shiftFrom = Infinity, shiftSd = 0): Float64Array {
  const random = seededRandom(seed);
  const out = new Float64Array(frames);
  let x = normalDraw(random);
  for (let t = 0; t < frames; t++) {
    x = phi * x + Math.sqrt(1 - phi * phi) * normalDraw(random);
    out[t] = x + (t >= shiftFrom ? shiftSd : 0);
  }
  return out;
}
