/**
 * Per-feature standardisation x_j = (f_j - mean_j) scale_j from some rows of a row-major feature
 * table: the rows' mean and 1 / (population) standard deviation, 0 for a feature that is constant
 * on them (its x is then 0, not a division by zero). The condition detector and the Knob heads
 * read their features so.
 */
export function featureStandardisation(
  features: Float32Array,
  width: number,
  rows: ArrayLike<number>,
): { mean: Float64Array; scale: Float64Array } {
  const n = rows.length;
  const mean = new Float64Array(width);
  const squares = new Float64Array(width);
  for (let i = 0; i < n; i++) for (let j = 0; j < width; j++) mean[j] += features[rows[i]! * width + j]!;
  for (let j = 0; j < width; j++) mean[j]! /= n;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < width; j++) squares[j] += (features[rows[i]! * width + j]! - mean[j]!) ** 2;
  const scale = squares.map((s) => {
    const deviation = Math.sqrt(s / n);
    return deviation > 1e-12 ? 1 / deviation : 0;
  });
  return { mean, scale };
}
