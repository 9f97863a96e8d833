/**
 * Writes NumPy .npy bytes (format 1.0, C order, little-endian), as numpy.save does: the tests
 * build real .npy/.npz files with it (an .npz is a zip of these, made with fflate's zipSync).
 */
const DESCR: Record<string, string> = {
  Uint8Array: '|u1',
  Int32Array: '<i4',
  Float32Array: '<f4',
  Float64Array: '<f8',
  BigInt64Array: '<i8',
};

export function npyBytes(
  values: Uint8Array | Int32Array | Float32Array | Float64Array | BigInt64Array,
  shape: number[],
): Uint8Array {
  const descr = DESCR[values.constructor.name];
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const out = new Uint8Array(10 + header.length + values.byteLength);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]);
  new DataView(out.buffer).setUint16(8, header.length, true);
  out.set(new TextEncoder().encode(header), 10);
  out.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), 10 + header.length);
  return out;
}
