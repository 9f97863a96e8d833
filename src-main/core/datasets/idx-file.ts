import { constants as zlib, gunzipSync, gzipSync } from 'node:zlib';
import { KnobError } from '../../../src-shared/errors';
import { formatBytes, inputLimit, RATIO_EXEMPT_BYTES } from '../files/input-limits';
import { writeOutputFile } from '../files/output-files';
import { readUserFile } from '../files/user-files';

/**
 * IDX files (LeCun's MNIST format, as Fashion-MNIST ships): magic 0x00 0x00 type dims, big-endian
 * dimension sizes, then the data. Only unsigned bytes (type 0x08) occur here. Gzipped files
 * (".gz") are read and written transparently: the header is unpacked first, what it declares is
 * checked against the limits (pixels per image, unpacked size, ratio), and then exactly that much is
 * unpacked (a stream that holds more than its header declares is refused, never allocated).
 */
export interface IdxArray {
  dimensions: number[];
  data: Uint8Array;
}

/** What an IDX header declares: dimensions, where the data starts, and how many bytes it holds. */
function idxHeader(bytes: Uint8Array, source: string): { dimensions: number[]; offset: number; size: number } {
  const fail = (problem: string): never => {
    throw new KnobError('INVALID_INPUT', `${source}: ${problem}`);
  };
  if (bytes.length < 4) fail('too short to be an IDX file');
  if (bytes[0] !== 0 || bytes[1] !== 0) fail('not an IDX file (bad magic number)');
  if (bytes[2] !== 0x08)
    fail(`IDX element type 0x${bytes[2].toString(16)} is not supported (only unsigned bytes, 0x08)`);
  const rank = bytes[3];
  if (rank < 1 || rank > 4) fail(`IDX rank ${rank} is not supported`);
  if (bytes.length < 4 + 4 * rank) fail('truncated header');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dimensions = Array.from({ length: rank }, (_, i) => view.getUint32(4 + 4 * i, false));
  if (rank >= 3) {
    const pixels = dimensions.slice(1).reduce((a, b) => a * b, 1);
    if (pixels > inputLimit('pixels')) {
      fail(
        `declares images of ${dimensions.slice(1).join(' x ')}, over the limit of ${inputLimit('pixels')} pixels each`,
      );
    }
  }
  return { dimensions, offset: 4 + 4 * rank, size: dimensions.reduce((a, b) => a * b, 1) };
}

export function parseIdx(bytes: Uint8Array, source: string): IdxArray {
  const { dimensions, offset, size } = idxHeader(bytes, source);
  if (bytes.length !== offset + size) {
    throw new KnobError(
      'INVALID_INPUT',
      `${source}: holds ${bytes.length - offset} data bytes, header says ${size} (${dimensions.join(' x ')})`,
    );
  }
  return { dimensions, data: bytes.subarray(offset) };
}

/** Unpacks a gzipped IDX file: the header first, then exactly the bytes it declares. */
function gunzipIdx(packed: Uint8Array, source: string): Uint8Array {
  const fail = (problem: string): never => {
    throw new KnobError('INVALID_INPUT', `${source}: ${problem}`);
  };
  let head: Uint8Array;
  try {
    // The first compressed bytes unpack to at most about 4 MB: enough for any header.
    head = gunzipSync(packed.subarray(0, 4096), { finishFlush: zlib.Z_SYNC_FLUSH });
  } catch {
    return fail('not a valid gzip file');
  }
  const { offset, size } = idxHeader(head, source);
  const declared = offset + size;
  const limit = inputLimit('decompressed');
  if (declared > limit)
    fail(`declares ${formatBytes(declared)} of data, over the unpacked limit of ${formatBytes(limit)}`);
  if (declared > RATIO_EXEMPT_BYTES && declared > inputLimit('ratio') * packed.length) {
    fail(
      `would unpack ${Math.round(declared / packed.length)} times its size, over the limit of ${inputLimit('ratio')} (a decompression bomb?)`,
    );
  }
  try {
    return gunzipSync(packed, { maxOutputLength: declared });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      return fail(`unpacks to more than the ${declared} bytes its header declares`);
    }
    return fail('not a valid gzip file (truncated or corrupt)');
  }
}

export function serializeIdx(array: IdxArray): Uint8Array {
  const header = new Uint8Array(4 + 4 * array.dimensions.length);
  header[2] = 0x08;
  header[3] = array.dimensions.length;
  const view = new DataView(header.buffer);
  array.dimensions.forEach((d, i) => view.setUint32(4 + 4 * i, d, false));
  const out = new Uint8Array(header.length + array.data.length);
  out.set(header);
  out.set(array.data, header.length);
  return out;
}

export async function readIdxFile(path: string): Promise<IdxArray> {
  return decodeIdxFile(await readUserFile(path, 'dataset'), path);
}

/** An IDX file's bytes as read (gzipped when its name ends in .gz), decoded. */
export function decodeIdxFile(bytes: Uint8Array, path: string): IdxArray {
  return parseIdx(path.endsWith('.gz') ? gunzipIdx(bytes, path) : bytes, path);
}

export async function writeIdxFile(path: string, array: IdxArray): Promise<void> {
  const bytes = serializeIdx(array);
  await writeOutputFile(path, path.endsWith('.gz') ? gzipSync(bytes) : bytes);
}
