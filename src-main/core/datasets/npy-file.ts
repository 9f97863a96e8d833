import { KnobError } from '../../../src-shared/errors';
import type { FileKind } from '../files/input-limits';
import { readArchive } from '../files/zip-archive';
import { readUserFile } from '../files/user-files';

/**
 * NumPy's .npy format (version 1.0-3.0: magic, header length, a Python-literal dict with descr,
 * fortran_order and shape) and .npz archives of them (a zip, read by bundle-archive.ts with its checks). Numeric dtypes
 * only, C order, little- or big-endian; values come back as float64 (converted on first use, so
 * 8-bit images are never widened). An archive is checked entry by entry before anything is
 * unpacked: the number of entries, each entry's declared size, their total and their compression
 * ratio (input-limits.ts); an entry whose data runs past its declared size is cut there, and the
 * array it holds is then refused as truncated.
 */
export interface NpyArray {
  shape: number[];
  dtype: string;
  /** float64 for floating types, the integer values as float64 otherwise (exact below 2^53); converted on first use. */
  readonly values: Float64Array;
  /** The raw bytes when dtype is uint8 (images), so they need no conversion. */
  bytes: Uint8Array | null;
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59];

const READERS: Record<string, { size: number; read: (view: DataView, at: number, little: boolean) => number }> = {
  f8: { size: 8, read: (v, at, le) => v.getFloat64(at, le) },
  f4: { size: 4, read: (v, at, le) => v.getFloat32(at, le) },
  i8: { size: 8, read: (v, at, le) => Number(v.getBigInt64(at, le)) },
  u8: { size: 8, read: (v, at, le) => Number(v.getBigUint64(at, le)) },
  i4: { size: 4, read: (v, at, le) => v.getInt32(at, le) },
  u4: { size: 4, read: (v, at, le) => v.getUint32(at, le) },
  i2: { size: 2, read: (v, at, le) => v.getInt16(at, le) },
  u2: { size: 2, read: (v, at, le) => v.getUint16(at, le) },
  i1: { size: 1, read: (v, at) => v.getInt8(at) },
  u1: { size: 1, read: (v, at) => v.getUint8(at) },
  b1: { size: 1, read: (v, at) => v.getUint8(at) },
};

export function parseNpy(bytes: Uint8Array, source: string): NpyArray {
  const fail = (problem: string): never => {
    throw new KnobError('INVALID_INPUT', `${source}: ${problem}`);
  };
  if (bytes.length < 10 || MAGIC.some((m, i) => bytes[i] !== m)) fail('not a .npy file (bad magic)');
  const major = bytes[6];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const headerStart = major === 1 ? 10 : 12;
  if (headerStart + headerLength > bytes.length) fail('truncated header');
  const header = new TextDecoder('latin1').decode(bytes.subarray(headerStart, headerStart + headerLength));
  const descr = /'descr'\s*:\s*'([<>|=])([a-z])(\d+)'/.exec(header);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shapeMatch = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shapeMatch) fail(`cannot read the header ${header.trim()}`);
  if (fortran![1] === 'True') fail('Fortran-ordered arrays are not supported (save with np.ascontiguousarray)');
  const shape = shapeMatch![1]
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(Number);
  if (shape.some((d) => !Number.isInteger(d) || d < 0)) fail(`bad shape (${shapeMatch![1]})`);
  const key = `${descr![2]}${descr![3]}`;
  const reader = READERS[key];
  if (!reader) fail(`dtype ${descr![1]}${key} is not supported (numeric types only)`);
  const little = descr![1] !== '>';
  const count = shape.reduce((a, b) => a * b, 1);
  const dataStart = headerStart + headerLength;
  if (bytes.length - dataStart < count * reader.size)
    fail(
      `holds ${bytes.length - dataStart} data bytes, shape (${shape.join(', ')}) of ${descr![1]}${key} needs ${count * reader.size}`,
    );
  let values: Float64Array | null = null;
  return {
    shape,
    dtype: key,
    bytes: key === 'u1' ? bytes.subarray(dataStart, dataStart + count) : null,
    get values(): Float64Array {
      if (values !== null) return values;
      try {
        values = new Float64Array(count);
      } catch {
        throw new KnobError('INVALID_INPUT', `${source}: ${count} values are too many to hold as numbers in memory`);
      }
      for (let i = 0; i < count; i++) values[i] = reader!.read(view, dataStart + i * reader!.size, little);
      return values;
    },
  };
}

export async function readNpyFile(path: string, kind: FileKind): Promise<NpyArray> {
  return parseNpy(await readUserFile(path, kind), path);
}

/** Every array of an .npz archive, by name without the .npy suffix. */
export async function readNpzFile(path: string, kind: FileKind): Promise<Record<string, NpyArray>> {
  const bytes = await readUserFile(path, kind);
  // only the arrays are unpacked; every entry is checked (bundle-archive.ts)
  const entries = await readArchive(bytes, path, { select: (name) => name.endsWith('.npy') });
  // no prototype: an array named 'constructor' or '__proto__' is a name, not an inherited property
  const arrays: Record<string, NpyArray> = Object.create(null);
  for (const [name, data] of entries) arrays[name.slice(0, -4)] = parseNpy(data, `${path}:${name}`);
  if (Object.keys(arrays).length === 0)
    throw new KnobError('INVALID_INPUT', `${path}: the archive holds no .npy arrays`);
  return arrays;
}
