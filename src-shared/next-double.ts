/**
 * The doubles next to a finite x, by stepping its IEEE 754 bit pattern by one: the magnitude's
 * 63 bits (two 32-bit words, the low one carrying into the high) grow by one away from zero and
 * shrink by one towards it. With plain 32-bit words, not a BigInt64Array: each BigInt read and sum
 * allocates, and a threshold calibration takes the inverse of a few hundred thousand records
 * (threshold-scale.ts), which spent a tenth of a second and most of its garbage there.
 */
const scratchDouble = new Float64Array(1);
const scratchWords = new Uint32Array(scratchDouble.buffer);
/** The index of the low word: 0 on a little-endian machine. */
const LOW = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 1;
const HIGH = 1 - LOW;

/** The next double above x (finite x). */
export function nextUp(x: number): number {
  if (x === 0) return Number.MIN_VALUE;
  scratchDouble[0] = x;
  if (x > 0) {
    // magnitude + 1
    scratchWords[LOW] = (scratchWords[LOW]! + 1) >>> 0;
    if (scratchWords[LOW] === 0) scratchWords[HIGH]!++;
  } else {
    // magnitude - 1 (x < 0, so the magnitude is not 0)
    if (scratchWords[LOW] === 0) scratchWords[HIGH]!--;
    scratchWords[LOW] = (scratchWords[LOW]! - 1) >>> 0;
  }
  return scratchDouble[0]!;
}

/** The next double below x (finite x). */
export function nextDown(x: number): number {
  return -nextUp(-x);
}
