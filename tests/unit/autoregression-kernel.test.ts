/**
 * The AR recursion in WebAssembly (src-shared/drift/autoregression-kernel.ts and .wat) that the
 * drift thresholds' simulated streams run on: bit for bit the JavaScript recursion it replaced, at
 * every order (groups of four and the terms left over), across calls that carry the ring; the
 * copula stream built on it gives the frames the frame-by-frame stream gave; and the committed
 * module is what its text source assembles to.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { dotProduct } from '../../src-shared/calibrators/dot-product';
import { autoregressInJavaScript, autoregressInPlace } from '../../src-shared/drift/autoregression-kernel';
import { CopulaStream, fitCopulaAutoregression } from '../../src-shared/drift/copula-autoregression';
import { normalDraw, seededRandom, type RandomSource } from '../../src-shared/random';

describe('the AR recursion in WebAssembly', () => {
  it('gives every value bit for bit as JavaScript does, at orders 0 to 53, over calls that carry the ring', () => {
    const random = seededRandom(3);
    for (let p = 0; p <= 53; p++) {
      // a stationary AR: coefficients summing to well under 1 in absolute value
      const coefficients = Float64Array.from({ length: p }, () => (random() - 0.5) / Math.max(1, p / 1.5));
      const lags = new Float64Array(2 * p);
      for (let j = 0; j < p; j++) lags[j] = lags[j + p] = normalDraw(random);
      const innovations = Float64Array.from({ length: 3000 }, () => normalDraw(random));
      const expected = innovations.slice();
      const expectedAt = autoregressInJavaScript(coefficients, lags.slice(), 0, expected, expected.length);
      // three calls of uneven lengths, the ring and its position carried between them
      const kernelLags = lags.slice();
      const values = innovations.slice();
      let at = 0;
      for (const [from, to] of [
        [0, 1],
        [1, 1777],
        [1777, 3000],
      ] as const) {
        const block = values.subarray(from, to);
        at = autoregressInPlace(coefficients, kernelLags, at, block, to - from);
      }
      expect(at, `order ${p}`).toBe(expectedAt);
      // Object.is per value: -0 and NaN would count too, and toEqual would allow neither difference
      const differing = values.findIndex((v, t) => !Object.is(v, expected[t]));
      expect(differing, `order ${p}`).toBe(-1);
    }
  });

  it('refuses a ring or a block too short for the call', () => {
    const coefficients = new Float64Array([0.5, 0.2]);
    expect(() => autoregressInPlace(coefficients, new Float64Array(3), 0, new Float64Array(8), 8)).toThrow(RangeError);
    expect(() => autoregressInPlace(coefficients, new Float64Array(4), 0, new Float64Array(8), 9)).toThrow(RangeError);
  });

  it('makes the copula stream give the frames it gave frame by frame, the random draws in the same order', () => {
    const random = seededRandom(5);
    const reference = Float64Array.from({ length: 20_000 }, (_, i) => Math.sin(i / 300) + 0.3 * normalDraw(random));
    const model = fitCopulaAutoregression(reference);
    expect(model.coefficients.length).toBeGreaterThan(4);
    const frames = 10_000;
    const stream = new CopulaStream(model, seededRandom(9));
    const indices = Array.from({ length: frames }, () => stream.nextIndex());
    expect(indices).toEqual(framesOneByOne(model, seededRandom(9), frames));
  });

  it('is carried as the bytes its text source assembles to (tools/build-wasm.mjs --check)', () => {
    const check = spawnSync(process.execPath, ['tools/build-wasm.mjs', '--check'], { encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});

/** The copula stream as it ran before the kernel: each frame's normal draw (Box-Muller, in pairs), AR sum and grid cell in turn. */
function framesOneByOne(model: ReturnType<typeof fitCopulaAutoregression>, random: RandomSource, frames: number) {
  const { coefficients, innovationSd, indexOfCell, scores } = model;
  const p = coefficients.length;
  const lags = new Float64Array(2 * Math.max(1, p));
  const start = Math.floor(random() * Math.max(1, scores.length - p));
  for (let j = 0; j < p; j++) lags[j] = lags[j + p] = scores[start + p - 1 - j]!;
  let spare = Number.NaN;
  const normal = (): number => {
    if (!Number.isNaN(spare)) {
      const z = spare;
      spare = Number.NaN;
      return z;
    }
    let u = random();
    while (u === 0) u = random();
    const radius = Math.sqrt(-2 * Math.log(u));
    const angle = 2 * Math.PI * random();
    spare = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  };
  const cells = indexOfCell.length;
  const cellWidth = (2 * 8.5) / cells;
  const indices: number[] = [];
  let at = 0;
  for (let t = 0; t < frames; t++) {
    const z = innovationSd * normal() + dotProduct(coefficients, 0, lags, at, p);
    if (p > 0) {
      at = at === 0 ? p - 1 : at - 1;
      lags[at] = lags[at + p] = z;
    }
    const cell = Math.floor((z + 8.5) / cellWidth);
    indices.push(indexOfCell[cell < 0 ? 0 : cell >= cells ? cells - 1 : cell]!);
  }
  return indices;
}
