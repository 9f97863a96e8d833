import { addScaledInto, dotProduct } from '../calibrators/dot-product';
import { normalDraw, type RandomSource } from '../random';

/**
 * An orthonormal basis of the dominant right singular subspace of a matrix X of `rows` x `width`
 * (row-major): the directions of the features along which the rows vary most, found by the
 * randomized range finder with power iterations (Halko, Martinsson & Tropp 2011, "Finding structure
 * with randomness", Algorithm 4.4, applied to X^T): Z = orth(X^T X ... X^T X Omega) with a Gaussian
 * Omega of `dimensions` columns. Returned as `width` x `dimensions`, row-major, columns orthonormal.
 * Cost: 2 (1 + powerIterations) rows x width x dimensions multiply-adds. Deterministic from `random`.
 */
export function dominantSubspace(
  x: Float64Array,
  rows: number,
  width: number,
  dimensions: number,
  random: RandomSource,
  powerIterations = 1,
): Float64Array {
  const d = dimensions;
  let basis = Float64Array.from({ length: width * d }, () => normalDraw(random));
  orthonormaliseColumns(basis, width, d);
  const y = new Float64Array(rows * d);
  for (let q = 0; q <= powerIterations; q++) {
    // y = X basis, then basis = orth(X^T y): one application of X^T X
    multiplyInto(x, rows, width, basis, d, y);
    orthonormaliseColumns(y, rows, d);
    // row by row, each feature's row of the basis in turn: contiguous (column by column strode
    // through the basis, d entries apart)
    basis = new Float64Array(width * d);
    for (let i = 0; i < rows; i++) {
      const o = i * width;
      for (let c = 0; c < width; c++) {
        const v = x[o + c]!;
        if (v !== 0) addScaledInto(v, y, i * d, basis, c * d, d);
      }
    }
    orthonormaliseColumns(basis, width, d);
  }
  return basis;
}

/**
 * out (rows x d) = x (rows x width) times basis (width x d), row-major: each entry the dot product of
 * a row of x and a column of the basis, the columns copied into rows first so both run contiguous
 * (dotProduct's partial sums: 1.7 times as fast as adding scaled basis rows into each output row,
 * measured at 8,000 x 2,048 x 128 on the build machine).
 */
export function multiplyInto(
  x: Float64Array,
  rows: number,
  width: number,
  basis: Float64Array,
  d: number,
  out: Float64Array,
): void {
  const columns = new Float64Array(d * width);
  for (let c = 0; c < width; c++) for (let m = 0; m < d; m++) columns[m * width + c] = basis[c * d + m]!;
  for (let i = 0; i < rows; i++)
    for (let m = 0; m < d; m++) out[i * d + m] = dotProduct(x, i * width, columns, m * width, width);
}

/**
 * Modified Gram-Schmidt on the columns of a `height` x `d` row-major matrix, twice over (one pass
 * loses orthogonality when columns are nearly dependent). A column that vanishes becomes zero.
 */
function orthonormaliseColumns(a: Float64Array, height: number, d: number): void {
  for (let pass = 0; pass < 2; pass++)
    for (let m = 0; m < d; m++) {
      for (let prior = 0; prior < m; prior++) {
        let dot = 0;
        for (let r = 0; r < height; r++) dot += a[r * d + m]! * a[r * d + prior]!;
        for (let r = 0; r < height; r++) a[r * d + m] -= dot * a[r * d + prior]!;
      }
      let norm = 0;
      for (let r = 0; r < height; r++) norm += a[r * d + m]! ** 2;
      norm = Math.sqrt(norm);
      for (let r = 0; r < height; r++) a[r * d + m] = norm > 1e-12 ? a[r * d + m]! / norm : 0;
    }
}
