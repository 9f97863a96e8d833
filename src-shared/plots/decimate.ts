/**
 * Min/max decimation for drawing a long series into `columns` pixel columns: each column keeps its
 * first, lowest, highest and last point in x order, so every excursion stays visible while a trace
 * of a million frames draws as a few thousand points. Points with a non-finite y are skipped.
 * `decimationIndices` gives the kept indices (to take other series at the same frames);
 * `decimateMinMax` the kept points.
 */
export function decimationIndices(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  xMin: number,
  xMax: number,
  columns: number,
): number[] {
  const n = Math.min(x.length, y.length);
  const kept: number[] = [];
  if (n <= columns * 4) {
    for (let i = 0; i < n; i++) if (Number.isFinite(y[i])) kept.push(i);
    return kept;
  }
  const span = xMax - xMin || 1;
  let column = -1;
  let first = -1;
  let low = -1;
  let high = -1;
  let last = -1;
  const flush = (): void => {
    if (first < 0) return;
    for (const i of [...new Set([first, low, high, last])].sort((a, b) => a - b)) kept.push(i);
  };
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(y[i])) continue;
    const c = Math.min(columns - 1, Math.max(0, Math.floor(((x[i] - xMin) / span) * columns)));
    if (c !== column) {
      flush();
      column = c;
      first = low = high = last = i;
      continue;
    }
    if (y[i] < y[low]) low = i;
    if (y[i] > y[high]) high = i;
    last = i;
  }
  flush();
  return kept;
}

export function decimateMinMax(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  xMin: number,
  xMax: number,
  columns: number,
): Array<[number, number]> {
  return decimationIndices(x, y, xMin, xMax, columns).map((i) => [x[i], y[i]]);
}
