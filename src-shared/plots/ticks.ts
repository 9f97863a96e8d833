/**
 * Axis ticks at "nice" values (1, 2 or 5 times a power of ten) covering [min, max], about `count`
 * of them (Heckbert's labelling), with the decimals their step needs for labels.
 */
export interface Ticks {
  values: number[];
  decimals: number;
}

export function niceTicks(min: number, max: number, count = 5): Ticks {
  if (!(max > min) || !Number.isFinite(min) || !Number.isFinite(max)) return { values: [min], decimals: 2 };
  const rough = (max - min) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(rough));
  const fraction = rough / power;
  const step = (fraction < 1.5 ? 1 : fraction < 3.5 ? 2 : fraction < 7.5 ? 5 : 10) * power;
  const values: number[] = [];
  const first = Math.ceil(min / step - 1e-9) * step;
  for (let v = first; v <= max + step * 1e-9; v += step) values.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return { values, decimals: Math.max(0, -Math.floor(Math.log10(step) + 1e-9)) };
}

export function tickLabel(value: number, decimals: number): string {
  return value.toFixed(decimals);
}

/**
 * Ticks for a log10 axis spanning [minLog10, maxLog10] (exponents): every decade, and 2x and 5x
 * within each decade when the span is under three decades, so labels never crowd (each tick value
 * is at least a factor 2 from the next). Values are in linear units.
 */
export function logTicks(minLog10: number, maxLog10: number): number[] {
  if (!(maxLog10 > minLog10) || !Number.isFinite(minLog10) || !Number.isFinite(maxLog10)) return [10 ** minLog10];
  const multiples = maxLog10 - minLog10 < 3 ? [1, 2, 5] : [1];
  const values: number[] = [];
  for (let decade = Math.floor(minLog10); decade <= Math.ceil(maxLog10); decade++) {
    for (const m of multiples) {
      const v = m * 10 ** decade;
      const at = Math.log10(v);
      if (at >= minLog10 - 1e-9 && at <= maxLog10 + 1e-9) values.push(Number(v.toPrecision(12)));
    }
  }
  return values;
}

/** A log-axis tick label: plain for 0.01 to 999, otherwise in powers of ten (1e+3). */
export function logTickLabel(value: number): string {
  if (value >= 1000 || value < 0.01) return value.toExponential(0);
  return Number(value.toPrecision(2)).toString();
}
