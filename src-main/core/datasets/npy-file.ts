import { unzipSync } from 'fflate';
import { KnobError } from '../../../src-shared/errors';
import { inputLimit, RATIO_EXEMPT_BYTES, type FileKind } from '../files/input-limits';
import { readUserFile } from '../files/user-files';

/**
 * NumPy's .npy format (version 1.0-3.0: magic, header length, a Python-literal dict with descr,
 * fortran_order and shape) and .npz archives of them (a zip, read with fflate). Numeric dtypes
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

/** The limits of one archive's entries, checked from the zip directory before any entry is unpacked. */
function archiveGuard(path: string): (file: { name: string; size: number; originalSize: number }) => boolean {
  const maxEntries = inputLimit('entries');
  const maxTotal = inputLimit('decompressed');
  const maxRatio = inputLimit('ratio');
  let entries = 0;
  let total = 0;
  return (file) => {
    if (++entries > maxEntries) {
      throw new KnobError(
        'INVALID_INPUT',
        `${path}: holds more than ${maxEntries} entries (raise it with --input-limit entries=COUNT)`,
      );
    }
    if (!file.name.endsWith('.npy')) return false; // only arrays are unpacked
    total += file.originalSize;
    if (total > maxTotal) {
      throw new KnobError(
        'INVALID_INPUT',
        `${path}: unpacks to more than ${maxTotal} bytes (entry ${file.name}; raise it with --input-limit decompressed=SIZE)`,
      );
    }
    if (file.originalSize > RATIO_EXEMPT_BYTES && file.originalSize > maxRatio * Math.max(1, file.size)) {
      throw new KnobError(
        'INVALID_INPUT',
        `${path}: entry ${file.name} unpacks ${Math.round(file.originalSize / Math.max(1, file.size))} times its packed size, over the limit of ${maxRatio} (a decompression bomb?)`,
      );
    }
    return true;
  };
}

/** Every array of an .npz archive, by name without the .npy suffix. */
export async function readNpzFile(path: string, kind: FileKind): Promise<Record<string, NpyArray>> {
  const bytes = await readUserFile(path, kind);
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes, { filter: archiveGuard(path) });
  } catch (error) {
    if (error instanceof KnobError) throw error;
    throw new KnobError('INVALID_INPUT', `${path}: not a valid .npz (zip) archive (${(error as Error).message})`);
  }
  const arrays: Record<string, NpyArray> = {};
  for (const [name, data] of Object.entries(entries)) {
    if (name.endsWith('.npy')) arrays[name.slice(0, -4)] = parseNpy(data, `${path}:${name}`);
  }
  if (Object.keys(arrays).length === 0)
    throw new KnobError('INVALID_INPUT', `${path}: the archive holds no .npy arrays`);
  return arrays;
}
