/** A number as the API carries it: JSON has no NaN or infinities, so a value that is not finite travels as null. */
export function finiteOrNull(value: number | null): number | null {
  return value !== null && Number.isFinite(value) ? value : null;
}

/** Every value of `values` as finiteOrNull gives it. */
export function finiteOrNullArray(values: ArrayLike<number>): Array<number | null> {
  return Array.from(values, finiteOrNull);
}
