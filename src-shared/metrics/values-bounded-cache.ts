/**
 * A cache of computed arrays bounded by the values they hold, the oldest going first: what a
 * metric recomputes from its parameters alone (a kernel's spectrum, a mesh's response) and visits
 * again across calls, as a bandwidth search revisits the same dyadic sigmas.
 */
export class ValuesBoundedCache<Key, Value> {
  private readonly entries = new Map<Key, Value>();
  private valuesHeld = 0;

  constructor(
    private readonly valuesKept: number,
    private readonly valuesOf: (value: Value) => number,
  ) {}

  get(key: Key, make: () => Value): Value {
    let value = this.entries.get(key);
    if (value === undefined) {
      value = make();
      this.valuesHeld += this.valuesOf(value);
      for (const [oldKey, old] of this.entries) {
        if (this.valuesHeld <= this.valuesKept) break;
        this.entries.delete(oldKey);
        this.valuesHeld -= this.valuesOf(old);
      }
      this.entries.set(key, value);
    }
    return value;
  }
}
