/** Presentation only: fixed, unit-bearing renderings of numbers computed in src-shared. */
export function formatNumber(value: number | null, digits = 3): string {
  if (value === null) return '—';
  if (value === Infinity) return '∞';
  if (!Number.isFinite(value)) return '—';
  return value.toFixed(digits);
}

export function formatSignificant(value: number, significantDigits = 3): string {
  if (!Number.isFinite(value)) return formatNumber(value);
  return Number(value.toPrecision(significantDigits)).toString();
}
