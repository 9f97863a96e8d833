/**
 * The doubles next to x (src-shared/next-double.ts), stepped on 32-bit words: equal to stepping the
 * 64-bit pattern as one BigInt (what threshold-scale.ts did before), on arbitrary finite doubles
 * and on the edges where the low word carries or borrows, the exponent changes, or zero and the
 * subnormals are crossed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextDown, nextUp } from '../../src-shared/next-double';

function nextUpByBigInt(x: number): number {
  if (x === 0) return Number.MIN_VALUE;
  const double = new Float64Array([x]);
  const bits = new BigInt64Array(double.buffer);
  bits[0]! += x > 0 ? 1n : -1n;
  return double[0]!;
}

function fromWords(high: number, low: number): number {
  const words = new Uint32Array(2);
  const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
  words[littleEndian ? 0 : 1] = low;
  words[littleEndian ? 1 : 0] = high;
  return new Float64Array(words.buffer)[0]!;
}

describe('the next double', () => {
  it('is the BigInt step of the bit pattern, above and below, on every finite double', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        expect(Object.is(nextUp(x), nextUpByBigInt(x))).toBe(true);
        expect(Object.is(nextDown(x), -nextUpByBigInt(-x))).toBe(true);
      }),
      { numRuns: 20_000, seed: 11 },
    );
  });

  it('carries and borrows between the words, crosses zero, the subnormals and an exponent', () => {
    const edges = [
      0,
      -0,
      Number.MIN_VALUE,
      -Number.MIN_VALUE,
      Number.MAX_VALUE,
      -Number.MAX_VALUE,
      1,
      -1,
      2 ** -1022,
      -(2 ** -1022),
      fromWords(0x3ff00000, 0xffffffff),
      fromWords(0xbff00000, 0xffffffff),
      fromWords(0x3ff00001, 0),
      fromWords(0xbff00001, 0),
      fromWords(0x000fffff, 0xffffffff),
    ];
    for (const x of edges) {
      expect(Object.is(nextUp(x), nextUpByBigInt(x)), `nextUp(${x})`).toBe(true);
      expect(Object.is(nextDown(x), -nextUpByBigInt(-x)), `nextDown(${x})`).toBe(true);
      if (x !== Number.MAX_VALUE) expect(nextUp(x)).toBeGreaterThan(x);
      if (x !== -Number.MAX_VALUE) expect(nextDown(x)).toBeLessThan(x);
    }
    expect(nextUp(Number.MAX_VALUE)).toBe(Infinity);
    expect(nextUp(fromWords(0x3ff00000, 0xffffffff))).toBe(fromWords(0x3ff00001, 0));
    expect(nextDown(fromWords(0x3ff00001, 0))).toBe(fromWords(0x3ff00000, 0xffffffff));
  });
});
