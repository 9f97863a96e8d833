/**
 * The randomized range finder (src-shared/heads/dominant-subspace.ts) against a matrix whose
 * dominant subspace is known: X = A V^T + noise, V an orthonormal width x r basis, A with
 * large columns. The basis found (d >= r columns) is orthonormal and contains V: projecting V onto
 * it leaves it all but unchanged (the sines of the principal angles below 1e-2 at noise 0.01).
 */
import { describe, expect, it } from 'vitest';
import { multiplyInto } from '../../src-shared/calibrators/matrix-products';
import { dominantSubspace } from '../../src-shared/heads/dominant-subspace';
import { normalDraw, seededRandom } from '../../src-shared/random';

/** r orthonormal columns of height `width`: random on disjoint blocks of the coordinates. */
function orthonormal(width: number, r: number, seed: number): Float64Array {
  const random = seededRandom(seed);
  const v = new Float64Array(width * r);
  const block = Math.floor(width / r);
  for (let m = 0; m < r; m++) {
    const values = Array.from({ length: block }, () => normalDraw(random));
    const norm = Math.sqrt(values.reduce((s, x) => s + x * x, 0));
    values.forEach((x, i) => (v[(m * block + i) * r + m] = x / norm));
  }
  return v;
}

describe('the dominant subspace', () => {
  it('is orthonormal and contains a planted low-rank structure', () => {
    const rows = 600;
    const width = 300;
    const r = 6;
    const d = 12;
    const v = orthonormal(width, r, 3);
    const random = seededRandom(5);
    const x = new Float64Array(rows * width);
    for (let i = 0; i < rows; i++) {
      const a = Array.from({ length: r }, (_, m) => (10 - m) * normalDraw(random));
      for (let c = 0; c < width; c++) {
        let value = 0.01 * normalDraw(random);
        for (let m = 0; m < r; m++) value += a[m]! * v[c * r + m]!;
        x[i * width + c] = value;
      }
    }
    const p = dominantSubspace(x, rows, width, d, seededRandom(7));
    // P^T P = I
    let worstGram = 0;
    for (let a = 0; a < d; a++)
      for (let b = 0; b < d; b++) {
        let dot = 0;
        for (let c = 0; c < width; c++) dot += p[c * d + a]! * p[c * d + b]!;
        worstGram = Math.max(worstGram, Math.abs(dot - (a === b ? 1 : 0)));
      }
    expect(worstGram).toBeLessThan(1e-10);
    // each planted direction: the norm of its part outside span(P) (the sine of its angle to it)
    const vt = new Float64Array(r * width);
    for (let m = 0; m < r; m++) for (let c = 0; c < width; c++) vt[m * width + c] = v[c * r + m]!;
    const coordinates = new Float64Array(r * d);
    multiplyInto(vt, r, width, p, d, coordinates);
    for (let m = 0; m < r; m++) {
      const inside = coordinates.subarray(m * d, (m + 1) * d).reduce((s, c) => s + c * c, 0);
      expect(Math.sqrt(Math.max(0, 1 - inside))).toBeLessThan(1e-2);
    }
    // deterministic from the random source
    expect(Array.from(dominantSubspace(x, rows, width, d, seededRandom(7)))).toEqual(Array.from(p));
  });
});
