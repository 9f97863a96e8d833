/**
 * The setup file tests/support/typed-array-equality.ts (every project): toEqual on typed arrays
 * compares bytes first, and answers as vitest's own comparison does, failures with its diff.
 */
import { describe, expect, it } from 'vitest';

describe('toEqual on typed arrays, bytes first', () => {
  it('equal arrays, shared memory or not, and inside objects', () => {
    const values = Float64Array.from({ length: 100_000 }, (_, i) => i * 0.5);
    expect(values).toEqual(Float64Array.from(values));
    expect({ table: values }).toStrictEqual({ table: Float64Array.from(values) });
    const shared = new Float64Array(new SharedArrayBuffer(8 * values.length));
    shared.set(values);
    expect(shared).toEqual(values);
    expect(Float64Array.of(Number.NaN)).toEqual(Float64Array.of(Number.NaN));
  });

  it('what vitest tells apart stays apart, with its diff', () => {
    const values = Int32Array.from({ length: 1000 }, (_, i) => i);
    const other = Int32Array.from(values);
    other[999] = -1;
    expect(() => expect(values).toEqual(other)).toThrow(/expected Int32Array\[ 0, 1, 2/);
    expect(Float64Array.of(0)).not.toEqual(Float64Array.of(-0));
    expect(Float32Array.of(1, 2)).not.toEqual(Float64Array.of(1, 2));
    expect(Uint8Array.of(1, 2)).not.toEqual(Uint8Array.of(1, 2, 3));
  });
});
