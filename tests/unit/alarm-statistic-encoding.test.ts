/**
 * A detector's code table for a reference (`codeTable`, what the threshold calibration reads a
 * simulated path's frames from) holds exactly what it encodes value by value (`encode`, what the
 * monitor and the live watch call a frame): the windowed KS's bins in the smallest integer array
 * that holds them, on ascending values (the walk over the edges) and on values in any order
 * (bisection), ties with the edges included; the CUSUM has none and encodes as it goes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TwoSidedCusum } from '../../src-shared/drift/cusum';
import { WindowKs } from '../../src-shared/drift/window-ks';

const values = fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: 1, maxLength: 200 });

describe("a detector's code table", () => {
  it("is the windowed KS's encode() of every value, ascending or not", () => {
    fc.assert(
      fc.property(values, values, fc.integer({ min: 2, max: 12 }), (referenceValues, encoded, bins) => {
        const reference = Float64Array.from(referenceValues, (x) => Math.round(x * 4) / 4);
        const ks = new WindowKs(reference, 2, 1, bins);
        // as drawn, ascending, and the reference's own values (ties with the edges)
        for (const input of [
          encoded,
          [...encoded].sort((a, b) => a - b),
          Array.from(reference).sort((a, b) => a - b),
        ]) {
          const table = ks.codeTable(Float64Array.from(input));
          expect(table).toBeInstanceOf(Uint8Array);
          expect(Array.from(table)).toEqual(input.map((x) => ks.encode(x)));
        }
      }),
    );
  });

  it('holds 256 bins in bytes, and bins past 256 and past 65,536 in 16 and 32 bits', () => {
    for (const [bins, kind] of [
      [256, Uint8Array],
      [257, Uint16Array],
      [300, Uint16Array],
      [70_000, Uint32Array],
    ] as const) {
      const reference = Float64Array.from({ length: bins }, (_, i) => i);
      const ks = new WindowKs(reference, 2, 1, bins);
      const input = Float64Array.from([-1, 0.5, bins / 2 + 0.5, bins - 0.5, bins + 1]);
      const table = ks.codeTable(input);
      expect(table).toBeInstanceOf(kind);
      expect(Array.from(table)).toEqual(Array.from(input, (x) => ks.encode(x)));
      // the last bin is bins - 1 (bins - 1 distinct edges): 255 in a byte, 256 past it
      expect(Math.max(...table)).toBe(bins - 1);
    }
  });

  it('is none for the CUSUM, which encodes as it goes', () => {
    expect(new TwoSidedCusum(0.3, 1.7).codeTable()).toBeNull();
  });
});
