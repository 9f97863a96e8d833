/**
 * Cells of the non-negative float64 line, read from bit patterns.
 *
 * Non-negative doubles order exactly as their bit patterns do, so the top bits of the high 32-bit
 * word (11 exponent bits and the first CELL_MANTISSA_BITS mantissa bits) cut [0, inf) into cells
 * that are ordered like the values: cell(a) < cell(b) implies a < b. Each cell spans 1/256 of an
 * octave, which keeps the cells of probabilities small even where they crowd near 0 (equal-width
 * cells would put every classwise probability below 1e-3 into one cell).
 *
 * Histograms and lookup tables over these cells are how the metrics order and bin a million values
 * in a few passes, without comparison sorts or per-value binary searches.
 */
const CELL_MANTISSA_BITS = 8;
export const CELL_SHIFT = 20 - CELL_MANTISSA_BITS;
/** Cells of the non-negative doubles (the sign bit is masked off, so -0 falls in 0's cell). */
export const CELL_COUNT = 1 << (31 - CELL_SHIFT);
const CELL_MASK = CELL_COUNT - 1;

/** Typed arrays take the platform's byte order; every platform Electron ships on is little-endian. */
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;
/** Index of the high word of element i in a Uint32Array view: 2 i + HIGH_WORD_OFFSET. */
export const HIGH_WORD_OFFSET = LITTLE_ENDIAN ? 1 : 0;

/** A Uint32 view of the same memory (two words per value). */
export function wordsOf(values: Float64Array): Uint32Array {
  return new Uint32Array(values.buffer, values.byteOffset, values.length * 2);
}

/** The cell of a value from its high word (for values read through wordsOf). */
function cellOfHighWord(highWord: number): number {
  return (highWord >>> CELL_SHIFT) & CELL_MASK;
}

const scratchValue = new Float64Array(1);
const scratchWords = wordsOf(scratchValue);

/** The cell of one non-negative value. */
export function cellOf(value: number): number {
  scratchValue[0] = value;
  return cellOfHighWord(scratchWords[HIGH_WORD_OFFSET]);
}
