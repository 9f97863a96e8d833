/**
 * How a computed number is written for a reader (the desk, the report, the CLI tables): the value
 * itself is never changed, only its rendering, so that what is shown does not claim precision the
 * computation does not have.
 */

/**
 * P-values are computed as 1 - CDF, which cannot resolve values below about 1e-15 (double
 * precision's 2.2e-16 steps near 1): those are written "< 1e-15", small ones in powers of ten.
 */
export function formatPValue(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (value < 1e-15) return '< 1e-15';
  if (value < 1e-4) return value.toExponential(1);
  return value.toFixed(4);
}

/**
 * A probability shown to three decimals, without rounding to a certainty the model did not state:
 * above 0.9995 it is "> 0.999", below 0.0005 (but not 0) "< 0.001".
 */
export function formatProbability(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (value >= 0.9995 && value < 1) return '> 0.999';
  if (value > 0 && value < 0.0005) return '< 0.001';
  return value.toFixed(3);
}

/** A metric value by its identity: P-values as above, very large or small magnitudes in powers of ten. */
export function formatMetricValue(identity: string, value: number | null, digits = 4): string {
  if (value === null || Number.isNaN(value)) return '—';
  if (value === Infinity) return '∞';
  if (value === -Infinity) return '−∞';
  if (/P-value/i.test(identity)) return formatPValue(value);
  // TCE is a percentage of predictions
  if (identity.startsWith('TCE(')) return `${value.toFixed(1)} %`;
  const magnitude = Math.abs(value);
  if (value !== 0 && (magnitude >= 1e5 || magnitude < 10 ** -digits)) return value.toExponential(2);
  return value.toFixed(digits);
}

/**
 * An interval's ends written outward at `digits` significant figures (lo rounded down, hi up):
 * the interval shown contains everything the computed one does, its estimate among them however
 * that is rounded (to nearest at as many figures or more). Rounding both to nearest could show an
 * end widened to the estimate on the wrong side of it.
 */
export function formatIntervalOutward(lo: number, hi: number, digits = 4): string {
  return `[${roundedTowards(lo, digits, 'down')}, ${roundedTowards(hi, digits, 'up')}]`;
}

/** A bound (how far a value can lie from the one shown) rounded up to three significant figures: never understated. */
export function formatBoundUp(bound: number): string {
  if (!(bound > 0) || !Number.isFinite(bound)) return String(bound);
  return roundedTowards(bound, 3, 'up');
}

/**
 * x at `digits` significant figures, rounded by `direction`: the nearest such figure when it lies
 * on that side of x (toPrecision's decimal is exact), else one unit of its last figure further.
 */
function roundedTowards(x: number, digits: number, direction: 'down' | 'up'): string {
  const nearest = x.toPrecision(digits);
  if (!Number.isFinite(x) || x === 0) return nearest;
  const value = Number(nearest);
  if (direction === 'up' ? value >= x : value <= x) return nearest;
  const unit = 10 ** (Math.floor(Math.log10(Math.abs(x))) - (digits - 1));
  return (direction === 'up' ? value + unit : value - unit).toPrecision(digits);
}

/** An interval's method as one line, with why it was widened when it was (its `note`). */
export function methodWithNote(method: string, note: string | undefined): string {
  return note === undefined ? method : `${method}; ${note}`;
}
