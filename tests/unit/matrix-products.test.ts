/**
 * The fits' blocked matrix products (src-shared/calibrators/matrix-products.ts) against the
 * textbook triple loop: A B^T to the bit (each entry summed over the inner index in order, as the
 * loop sums it), at every remainder of the 2 x 4 blocks; X^T Y over several row blocks to rounding;
 * accumulation onto what the output holds; R^T X added onto a gradient.
 */
import { describe, expect, it } from 'vitest';
import {
  addTransposedRowsProductInto,
  multiplyInto,
  multiplyTransposedInto,
  transposed,
  transposedProductInto,
} from '../../src-shared/calibrators/matrix-products';
import { normalDraw, seededRandom } from '../../src-shared/random';

const random = seededRandom(11);
const matrix = (rows: number, columns: number) =>
  Float64Array.from({ length: rows * columns }, () => normalDraw(random));

/** out[i, m] = sum_c a[i, c] b[m, c], the plain loop. */
function naiveTransposedProduct(a: Float64Array, aRows: number, inner: number, b: Float64Array, bRows: number) {
  const out = new Float64Array(aRows * bRows);
  for (let i = 0; i < aRows; i++)
    for (let m = 0; m < bRows; m++) {
      let sum = 0;
      for (let c = 0; c < inner; c++) sum += a[i * inner + c]! * b[m * inner + c]!;
      out[i * bRows + m] = sum;
    }
  return out;
}

describe('the blocked matrix products', () => {
  it('A B^T equals the plain loop to the bit, at every remainder of the blocks', () => {
    for (const aRows of [1, 2, 3, 5])
      for (const bRows of [1, 3, 4, 6, 9])
        for (const inner of [1, 7, 64]) {
          const a = matrix(aRows, inner);
          const b = matrix(bRows, inner);
          const out = new Float64Array(aRows * bRows).fill(Number.NaN);
          multiplyTransposedInto(a, aRows, inner, b, bRows, out);
          expect(Array.from(out)).toEqual(Array.from(naiveTransposedProduct(a, aRows, inner, b, bRows)));
        }
  });

  it('adds onto the output when accumulating', () => {
    const a = matrix(3, 5);
    const b = matrix(5, 5);
    const out = Float64Array.from({ length: 15 }, (_, i) => i);
    multiplyTransposedInto(a, 3, 5, b, 5, out, true);
    const product = naiveTransposedProduct(a, 3, 5, b, 5);
    out.forEach((value, i) => expect(value).toBe(i + product[i]!));
  });

  it('X M and X^T Y, over more rows than one transposed block', () => {
    const rows = 600;
    const width = 13;
    const d = 6;
    const x = matrix(rows, width);
    const m = matrix(width, d);
    const xm = new Float64Array(rows * d);
    multiplyInto(x, rows, width, m, d, xm);
    expect(Array.from(xm)).toEqual(Array.from(naiveTransposedProduct(x, rows, width, transposed(m, width, d), d)));
    const y = matrix(rows, d);
    const xty = new Float64Array(width * d).fill(Number.NaN);
    transposedProductInto(x, rows, width, y, d, xty);
    const expected = naiveTransposedProduct(transposed(x, rows, width), width, rows, transposed(y, rows, d), d);
    xty.forEach((value, i) => expect(value).toBeCloseTo(expected[i]!, 11));
  });

  it('adds R^T X onto a gradient, four rows at a time and the rows left over', () => {
    for (const rows of [1, 4, 7, 9]) {
      const k = 3;
      const width = 5;
      const r = matrix(rows, k);
      const x = matrix(rows, width);
      const out = Float64Array.from({ length: k * width }, (_, i) => i);
      addTransposedRowsProductInto(r, k, x, rows, width, out);
      const product = naiveTransposedProduct(transposed(r, rows, k), k, rows, transposed(x, rows, width), width);
      out.forEach((value, i) => expect(value).toBeCloseTo(i + product[i]!, 12));
    }
  });

  it('transposes', () => {
    expect(Array.from(transposed(Float64Array.of(1, 2, 3, 4, 5, 6), 2, 3))).toEqual([1, 4, 2, 5, 3, 6]);
  });
});
