/**
 * The last `capacity` live updates as columns (time, g, u*, severity, rolling accuracy and mean
 * confidence as the backend computed them) for the
 * charts: a ring buffer of typed arrays, so a long stream costs fixed memory and no allocation per
 * update. `ordered` copies the ring out oldest-first for a redraw (at most once per animation frame).
 */
export const HISTORY_COLUMNS = ['t', 'g', 'u', 'severity', 'rollingAccuracy', 'rollingConfidence'] as const;
export type HistoryColumn = (typeof HISTORY_COLUMNS)[number];

export class StreamHistory {
  readonly capacity: number;
  private readonly columns: Record<HistoryColumn, Float64Array>;
  private next = 0;
  private size = 0;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.columns = Object.fromEntries(HISTORY_COLUMNS.map((c) => [c, new Float64Array(capacity)])) as Record<
      HistoryColumn,
      Float64Array
    >;
  }

  get length(): number {
    return this.size;
  }

  push(values: Record<HistoryColumn, number>): void {
    for (const column of HISTORY_COLUMNS) this.columns[column][this.next] = values[column];
    this.next = (this.next + 1) % this.capacity;
    this.size = Math.min(this.capacity, this.size + 1);
  }

  /** Rewrites columns of the newest entry (a label changed what its rolling figures are). */
  amendNewest(values: Partial<Record<HistoryColumn, number>>): boolean {
    if (this.size === 0) return false;
    const at = (this.next - 1 + this.capacity) % this.capacity;
    for (const column of HISTORY_COLUMNS) {
      const value = values[column];
      if (value !== undefined) this.columns[column][at] = value;
    }
    return true;
  }

  clear(): void {
    this.next = 0;
    this.size = 0;
  }

  /**
   * Writes the column oldest-first into `target` as {x: t, y: scale * value} points for chart.js
   * (parsing off), reusing the point objects already there: a redraw 30 times a second would
   * otherwise allocate thousands of objects each time and invite garbage-collection pauses.
   */
  fillPoints(column: HistoryColumn, target: { x: number; y: number }[], scale = 1): void {
    const start = (this.next - this.size + this.capacity) % this.capacity;
    const t = this.columns.t;
    const y = this.columns[column];
    while (target.length < this.size) target.push({ x: 0, y: 0 });
    target.length = this.size;
    for (let i = 0; i < this.size; i++) {
      const at = (start + i) % this.capacity;
      const point = target[i];
      point.x = t[at];
      point.y = y[at] * scale;
    }
  }

  /** A column oldest-first as a new array (for an export, not for redraws). */
  values(column: HistoryColumn): Float64Array {
    const out = new Float64Array(this.size);
    const start = (this.next - this.size + this.capacity) % this.capacity;
    for (let i = 0; i < this.size; i++) out[i] = this.columns[column][(start + i) % this.capacity];
    return out;
  }
}
