import { addScaledInto } from './dot-product';

/**
 * The matrix products of the fits on features (softmax regression's scores and gradient, the gate
 * network's first layer, the dominant subspace and its projection), row-major throughout. A B^T and
 * X M sum each entry over the inner index in order; X^T Y sums each block of rows so and adds the
 * blocks in turn, and R^T X adds four rows' terms at a time: fixed orders, so the fits stay
 * deterministic.
 *
 * Why blocks: a product entry by entry (dotProduct) reads two values for each multiply-add, and in
 * V8 the reads, each with its bounds check, cost more than the arithmetic. Two rows of one operand
 * against four of the other keep eight sums in registers and read six values for eight
 * multiply-adds: on the 2-core build machine 2,000 x 2,048 times 2,048 x 128 took 223-234 ms
 * against 511 ms entry by entry, and X^T Y in transposed row blocks 246 ms against 493 ms adding
 * scaled rows (2026-12-07).
 */

/**
 * out[i, m] = sum_c a[i, c] b[m, c] for i < aRows, m < bRows (A B^T: both read along their rows),
 * `inner` values a row; added to what `out` holds when `accumulate`, written over it otherwise.
 */
export function multiplyTransposedInto(
  a: Float64Array,
  aRows: number,
  inner: number,
  b: Float64Array,
  bRows: number,
  out: Float64Array,
  accumulate = false,
): void {
  const fullRows = aRows - (aRows % 2);
  const fullColumns = bRows - (bRows % 4);
  for (let i = 0; i < fullRows; i += 2) {
    const a0 = i * inner;
    const a1 = a0 + inner;
    const o0 = i * bRows;
    const o1 = o0 + bRows;
    for (let m = 0; m < fullColumns; m += 4) {
      const b0 = m * inner;
      const b1 = b0 + inner;
      const b2 = b1 + inner;
      const b3 = b2 + inner;
      let s00 = 0;
      let s01 = 0;
      let s02 = 0;
      let s03 = 0;
      let s10 = 0;
      let s11 = 0;
      let s12 = 0;
      let s13 = 0;
      for (let c = 0; c < inner; c++) {
        const p0 = a[a0 + c]!;
        const p1 = a[a1 + c]!;
        const q0 = b[b0 + c]!;
        const q1 = b[b1 + c]!;
        const q2 = b[b2 + c]!;
        const q3 = b[b3 + c]!;
        s00 += p0 * q0;
        s01 += p0 * q1;
        s02 += p0 * q2;
        s03 += p0 * q3;
        s10 += p1 * q0;
        s11 += p1 * q1;
        s12 += p1 * q2;
        s13 += p1 * q3;
      }
      store(out, o0 + m, s00, accumulate);
      store(out, o0 + m + 1, s01, accumulate);
      store(out, o0 + m + 2, s02, accumulate);
      store(out, o0 + m + 3, s03, accumulate);
      store(out, o1 + m, s10, accumulate);
      store(out, o1 + m + 1, s11, accumulate);
      store(out, o1 + m + 2, s12, accumulate);
      store(out, o1 + m + 3, s13, accumulate);
    }
    // the columns past the last block of four: two sums, three reads for two multiply-adds
    for (let m = fullColumns; m < bRows; m++) {
      const bAt = m * inner;
      let s0 = 0;
      let s1 = 0;
      for (let c = 0; c < inner; c++) {
        const q = b[bAt + c]!;
        s0 += a[a0 + c]! * q;
        s1 += a[a1 + c]! * q;
      }
      store(out, o0 + m, s0, accumulate);
      store(out, o1 + m, s1, accumulate);
    }
  }
  for (let i = fullRows; i < aRows; i++)
    for (let m = 0; m < bRows; m++)
      store(out, i * bRows + m, rowProduct(a, i * inner, b, m * inner, inner), accumulate);
}

/** out (rows x d) = x (rows x width) times `matrix` (width x d). */
export function multiplyInto(
  x: Float64Array,
  rows: number,
  width: number,
  matrix: Float64Array,
  d: number,
  out: Float64Array,
): void {
  multiplyTransposedInto(x, rows, width, transposed(matrix, width, d), d, out);
}

/** Rows of x^T y taken at once: 256 rows of 2,048 features transposed are 4 MiB. */
const TRANSPOSED_BLOCK_ROWS = 256;

/**
 * out (width x d) = x^T (width x rows) times y (rows x d), x being rows x width: a block of rows at
 * a time, transposed, so the product reads along rows (the block's sums added into `out` in turn).
 */
export function transposedProductInto(
  x: Float64Array,
  rows: number,
  width: number,
  y: Float64Array,
  d: number,
  out: Float64Array,
): void {
  out.fill(0, 0, width * d);
  const block = Math.min(TRANSPOSED_BLOCK_ROWS, rows);
  const xBlock = new Float64Array(width * block);
  const yBlock = new Float64Array(d * block);
  for (let from = 0; from < rows; from += block) {
    const count = Math.min(block, rows - from);
    transposedInto(x.subarray(from * width, (from + count) * width), count, width, xBlock);
    transposedInto(y.subarray(from * d, (from + count) * d), count, d, yBlock);
    multiplyTransposedInto(xBlock, width, count, yBlock, d, out, true);
  }
}

/**
 * out[k, j] += sum_i r[i, k] x[i, j] (out += R^T X: a gradient's rows, R being rows x k and X rows
 * x width): four rows of X at a time, so each entry of `out` is read and written once for four of
 * them (an entry's four terms summed before they are added to it). No transposed copy of X is made:
 * a fit's X may be hundreds of megabytes.
 */
export function addTransposedRowsProductInto(
  r: Float64Array,
  k: number,
  x: Float64Array,
  rows: number,
  width: number,
  out: Float64Array,
): void {
  let i = 0;
  for (; i + 3 < rows; i += 4) {
    const x0 = i * width;
    const x1 = x0 + width;
    const x2 = x1 + width;
    const x3 = x2 + width;
    for (let m = 0; m < k; m++) {
      const r0 = r[i * k + m]!;
      const r1 = r[(i + 1) * k + m]!;
      const r2 = r[(i + 2) * k + m]!;
      const r3 = r[(i + 3) * k + m]!;
      const o = m * width;
      for (let j = 0; j < width; j++)
        out[o + j] += r0 * x[x0 + j]! + r1 * x[x1 + j]! + (r2 * x[x2 + j]! + r3 * x[x3 + j]!);
    }
  }
  for (; i < rows; i++) for (let m = 0; m < k; m++) addScaledInto(r[i * k + m]!, x, i * width, out, m * width, width);
}

/** The transpose (columns x rows) of a rows x columns matrix. */
export function transposed(matrix: Float64Array, rows: number, columns: number): Float64Array {
  const out = new Float64Array(rows * columns);
  transposedInto(matrix, rows, columns, out);
  return out;
}

/** The transpose of a rows x columns matrix into `out` (columns x rows). */
export function transposedInto(matrix: Float64Array, rows: number, columns: number, out: Float64Array): void {
  for (let r = 0; r < rows; r++) for (let c = 0; c < columns; c++) out[c * rows + r] = matrix[r * columns + c]!;
}

function rowProduct(a: Float64Array, aAt: number, b: Float64Array, bAt: number, inner: number): number {
  let sum = 0;
  for (let c = 0; c < inner; c++) sum += a[aAt + c]! * b[bAt + c]!;
  return sum;
}

function store(out: Float64Array, at: number, value: number, accumulate: boolean): void {
  out[at] = accumulate ? out[at]! + value : value;
}
