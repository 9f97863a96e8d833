import type { SeriesWriter } from './exponential-series';

/** A growing Float64 store (the series), doubling as it fills. */
export class GrowingValues implements SeriesWriter {
  constructor(
    private store: Float64Array<ArrayBufferLike> = new Float64Array(1024),
    public length = 0,
  ) {}
  reserve(count: number): number {
    if (this.length + count > this.store.length) {
      const grown = new Float64Array(Math.max(this.store.length * 2, this.length + count));
      grown.set(this.store.subarray(0, this.length));
      this.store = grown;
    }
    const at = this.length;
    this.length += count;
    return at;
  }
  values(): Float64Array<ArrayBufferLike> {
    return this.store;
  }
}

/** A growing Int32 list. */
export class GrowingInts {
  constructor(
    private store: Int32Array<ArrayBufferLike> = new Int32Array(256),
    public length = 0,
  ) {}
  push(value: number): void {
    if (this.length === this.store.length) {
      const grown = new Int32Array(this.store.length * 2);
      grown.set(this.store);
      this.store = grown;
    }
    this.store[this.length++] = value;
  }
  values(): Int32Array<ArrayBufferLike> {
    return this.store;
  }
}
