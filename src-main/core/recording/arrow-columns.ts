import {
  Field,
  FixedSizeList,
  Float32,
  makeData,
  Uint16,
  type Data,
  type DataType,
  type Table,
  type Vector,
} from 'apache-arrow';
import { KnobError } from '../../../src-shared/errors';

/**
 * Trace columns to and from apache-arrow's data, for trace-arrow.ts and kept-class-columns.ts:
 * the app's typed arrays are written as they lie, and read back as views of the file's bytes where
 * a column is one chunk (what the app writes), copied otherwise.
 */
export function primitive<T extends DataType>(
  type: T,
  values: ArrayLike<number> & { buffer: ArrayBufferLike },
  nullBitmap?: Uint8Array,
): Data<T> {
  return makeData({ type, length: values.length, data: values, nullBitmap } as never) as Data<T>;
}

type RowValues = Float32Array | Uint16Array;
type RowValuesType = { new (n: number): RowValues; name: string };

/** Fixed-size rows of `k` values (float32 logits or features, uint16 class indices). */
export function rowsOf(values: RowValues, k: number, item = 'logit'): Data<FixedSizeList> {
  const itemType = values instanceof Uint16Array ? new Uint16() : new Float32();
  const child = primitive(itemType as DataType, values);
  return makeData({
    type: new FixedSizeList(k, new Field(item, itemType, false)),
    length: values.length / k,
    child,
  } as never) as unknown as Data<FixedSizeList>;
}

export function column(table: Table, name: string, source: string): Vector {
  const vector = table.getChild(name);
  if (vector === null) throw new KnobError('INVALID_TRACE', `${source}: column '${name}' is missing`);
  return vector;
}

/** n rows of k values of a fixed-size-list column, as `ctor` values (float32 unless given). */
export function listRows<T extends RowValues = Float32Array>(
  vector: Vector,
  n: number,
  k: number,
  name: string,
  source: string,
  ctor: RowValuesType = Float32Array,
): T {
  const itemName = ctor === Uint16Array ? 'uint16' : 'float32';
  // one chunk (what the app writes): the column as it lies in the file, not a copy
  const only = vector.data.length === 1 ? vector.data[0]! : null;
  const child = only?.children[0];
  if (
    only !== null &&
    child !== undefined &&
    (only.type as FixedSizeList).listSize === k &&
    child.values instanceof ctor &&
    only.length === n &&
    only.offset === 0 &&
    (child.offset ?? 0) === 0 &&
    child.length === n * k &&
    child.values.length >= n * k
  )
    return (child.values as T).subarray(0, n * k) as T;
  const out = new ctor(n * k) as T;
  let row = 0;
  for (const chunk of vector.data) {
    const child = chunk.children[0];
    if (child === undefined || (chunk.type as FixedSizeList).listSize !== k || !(child.values instanceof ctor))
      throw new KnobError('INVALID_TRACE', `${source}: column '${name}' is not a list of ${k} ${itemName} values`);
    const values = child.values as T;
    const start = (child.offset ?? 0) + chunk.offset * k;
    const end = (child.offset ?? 0) + (chunk.offset + chunk.length) * k;
    // a list whose values are not exactly its rows times its width (a width that lies) is
    // refused, not zero-filled or read askew
    if (end > values.length || row + chunk.length > n || child.length !== (chunk.offset + chunk.length) * k)
      throw new KnobError(
        'INVALID_TRACE',
        `${source}: column '${name}' holds ${child.length} values, not ${chunk.length} rows of ${k}`,
      );
    out.set(values.subarray(start, end) as never, row * k);
    row += chunk.length;
  }
  return out;
}

export function numbers<T extends Float64Array | Float32Array | Int32Array | Uint32Array>(
  vector: Vector,
  ctor: new (n: number) => T,
): T {
  const out = new ctor(vector.length);
  let i = 0;
  for (const chunk of vector.data) {
    const values = chunk.values as ArrayLike<number>;
    for (let j = 0; j < chunk.length; j++) out[i++] = Number(values[chunk.offset + j]);
  }
  return out;
}
