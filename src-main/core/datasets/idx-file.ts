import { writeFile } from 'node:fs/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { KnobError } from '../../../src-shared/errors';
import { readInputFile } from '../files/read-input-file';

/**
 * IDX files (LeCun's MNIST format, as Fashion-MNIST ships): magic 0x00 0x00 type dims, big-endian
 * dimension sizes, then the data. Only unsigned bytes (type 0x08) occur here. Gzipped files
 * (".gz") are read and written transparently.
 */
export interface IdxArray {
  dimensions: number[];
  data: Uint8Array;
}

export function parseIdx(bytes: Uint8Array, source: string): IdxArray {
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
  const size = dimensions.reduce((a, b) => a * b, 1);
  const offset = 4 + 4 * rank;
  if (bytes.length !== offset + size)
    fail(`holds ${bytes.length - offset} data bytes, header says ${size} (${dimensions.join(' x ')})`);
  return { dimensions, data: bytes.subarray(offset) };
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
  let bytes = await readInputFile(path);
  if (path.endsWith('.gz')) {
    try {
      bytes = gunzipSync(bytes);
    } catch {
      throw new KnobError('INVALID_INPUT', `${path}: not a valid gzip file`);
    }
  }
  return parseIdx(bytes, path);
}

export async function writeIdxFile(path: string, array: IdxArray): Promise<void> {
  const bytes = serializeIdx(array);
  await writeFile(path, path.endsWith('.gz') ? gzipSync(bytes) : bytes);
}
