import { addScaledInto, dotProduct } from '../calibrators/dot-product';
import { multiplyInto, transposed, transposedInto, transposedProductInto } from '../calibrators/matrix-products';
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
  const basis = Float64Array.from({ length: width * d }, () => normalDraw(random));
  orthonormaliseColumns(basis, width, d);
  const y = new Float64Array(rows * d);
  for (let q = 0; q <= powerIterations; q++) {
    // y = X basis, then basis = orth(X^T y): one application of X^T X
    multiplyInto(x, rows, width, basis, d, y);
    orthonormaliseColumns(y, rows, d);
    transposedProductInto(x, rows, width, y, d, basis);
    orthonormaliseColumns(basis, width, d);
  }
  return basis;
}

/**
 * Modified Gram-Schmidt on the columns of a `height` x `d` row-major matrix, twice over (one pass
 * loses orthogonality when columns are nearly dependent). A column that vanishes becomes zero. On
 * the transpose, so each column is read along a row (down a row-major column every read is d
 * values from the last: 8,000 x 128 took about 0.9 s a pass).
 */
function orthonormaliseColumns(a: Float64Array, height: number, d: number): void {
  const columns = transposed(a, height, d);
  for (let pass = 0; pass < 2; pass++)
    for (let m = 0; m < d; m++) {
      const at = m * height;
      for (let prior = 0; prior < m; prior++) {
        const dot = dotProduct(columns, at, columns, prior * height, height);
        addScaledInto(-dot, columns, prior * height, columns, at, height);
      }
      const norm = Math.sqrt(dotProduct(columns, at, columns, at, height));
      for (let r = 0; r < height; r++) columns[at + r] = norm > 1e-12 ? columns[at + r]! / norm : 0;
    }
  transposedInto(columns, d, height, a);
}
