import { dotProduct } from '../../src-shared/calibrators/dot-product';

/**
 * The AR recursion as JavaScript ran it frame by frame before the WebAssembly kernel
 * (src-shared/drift/autoregression-kernel.ts): z_t = innovation_t + dotProduct(coefficients, lags
 * from `at`), the ring stepped back one and z written twice. The kernel's test compares with it
 * bit for bit, and the drift benchmark times both in the same run.
 */
export function autoregressionInJavaScript(
  coefficients: Float64Array,
  lags: Float64Array,
  at: number,
  innovations: Float64Array,
): { values: Float64Array; at: number } {
  const p = coefficients.length;
  const values = new Float64Array(innovations.length);
  for (let t = 0; t < innovations.length; t++) {
    const z = innovations[t]! + dotProduct(coefficients, 0, lags, at, p);
    values[t] = z;
    if (p > 0) {
      at = at === 0 ? p - 1 : at - 1;
      lags[at] = lags[at + p] = z;
    }
  }
  return { values, at };
}
