import { describe, expect, it } from 'vitest';
import { addScaledInto, dotProduct } from '../../src-shared/calibrators/dot-product';
import { seededRandom } from '../../src-shared/random';

/** Exact sums: integer values small enough that every partial sum is exact in float64. */
const integers = (length: number, random: () => number) =>
  Float64Array.from({ length }, () => Math.floor(random() * 201) - 100);

describe('the fits inner loops', () => {
  it('dotProduct: every length and offset, the tail included, equals the sum of products', () => {
    const random = seededRandom(7);
    for (let length = 0; length <= 11; length++)
      for (const [aOffset, bOffset] of [
        [0, 0],
        [3, 1],
      ]) {
        const a = integers(length + aOffset + 2, random);
        const b = integers(length + bOffset + 2, random);
        let exact = 0;
        for (let j = 0; j < length; j++) exact += a[aOffset + j]! * b[bOffset + j]!;
        expect(dotProduct(a, aOffset!, b, bOffset!, length)).toBe(exact);
      }
  });

  it('dotProduct on real numbers: within rounding of the left-to-right sum', () => {
    const random = seededRandom(8);
    const a = Float64Array.from({ length: 2048 }, () => random() - 0.5);
    const b = Float64Array.from({ length: 2048 }, () => random() - 0.5);
    let plain = 0;
    for (let j = 0; j < 2048; j++) plain += a[j]! * b[j]!;
    expect(Math.abs(dotProduct(a, 0, b, 0, 2048) - plain)).toBeLessThan(1e-12);
  });

  it('addScaledInto touches exactly the entries it is given, each as y + s x', () => {
    const random = seededRandom(9);
    for (let length = 0; length <= 9; length++) {
      const x = Float64Array.from({ length: length + 4 }, () => random() - 0.5);
      const y = Float64Array.from({ length: length + 6 }, () => random() - 0.5);
      const expected = Float64Array.from(y);
      for (let j = 0; j < length; j++) expected[2 + j] += 0.37 * x[1 + j]!;
      addScaledInto(0.37, x, 1, y, 2, length);
      expect(y).toEqual(expected);
    }
  });
});
