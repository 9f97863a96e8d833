/**
 * Min/max decimation for drawing a long series into `columns` pixel columns: each column keeps its
 * first, lowest, highest and last point in x order, so every excursion stays visible while a trace
 * of a million frames draws as a few thousand points. Points with a non-finite y are skipped.
 */
export function decimateMinMax(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  xMin: number,
  xMax: number,
  columns: number,
): Array<[number, number]> {
  const n = Math.min(x.length, y.length);
  if (n <= columns * 4) {
    const all: Array<[number, number]> = [];
    for (let i = 0; i < n; i++) if (Number.isFinite(y[i])) all.push([x[i], y[i]]);
    return all;
  }
  const out: Array<[number, number]> = [];
  const span = xMax - xMin || 1;
  let column = -1;
  let first = -1;
  let low = -1;
  let high = -1;
  let last = -1;
  const flush = (): void => {
    if (first < 0) return;
    const kept = [...new Set([first, low, high, last])].sort((a, b) => a - b);
    for (const i of kept) out.push([x[i], y[i]]);
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
  return out;
}
