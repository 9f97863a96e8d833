/**
 * A detector encodes a whole reference at once (`encodeInto`, what the threshold calibration
 * calls a simulated path) exactly as it encodes value by value (`encode`, what the monitor and the
 * live watch call a frame): the CUSUM's standardised value, the windowed KS's bin, on ascending
 * values (the walk over the edges) and on values in any order (bisection), ties and edges included.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TwoSidedCusum } from '../../src-shared/drift/cusum';
import { WindowKs } from '../../src-shared/drift/window-ks';

const values = fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: 1, maxLength: 200 });

describe('encoding a reference at once', () => {
  it('is encode() of every value, for the CUSUM and the windowed KS, ascending or not', () => {
    fc.assert(
      fc.property(values, values, fc.integer({ min: 2, max: 12 }), (referenceValues, encoded, bins) => {
        const reference = Float64Array.from(referenceValues, (x) => Math.round(x * 4) / 4);
        const statistics = [new TwoSidedCusum(0.3, 1.7), new WindowKs(reference, 2, 1, bins)];
        // as drawn, ascending, and with the reference's own values (ties with the edges)
        const inputs = [encoded, [...encoded].sort((a, b) => a - b), Array.from(reference).sort((a, b) => a - b)].map(
          (xs) => Float64Array.from(xs),
        );
        for (const statistic of statistics)
          for (const input of inputs) {
            const out = new Float64Array(input.length);
            statistic.encodeInto(input, out);
            expect(Array.from(out)).toEqual(Array.from(input, (x) => statistic.encode(x)));
          }
      }),
    );
  });
});
