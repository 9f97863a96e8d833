import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import jpeg from 'jpeg-js';
import { npyBytes } from './npy-writer';

/**
 * Hostile inputs built on disk by the tests: special files under the names of data files (a FIFO,
 * an endless device, a folder, a /proc entry) and decompression bombs of every packed kind (zip
 * bombs by ratio, by a declared size, by a lying header; gzip IDX bombs; images whose headers
 * declare enormous dimensions; too many archive entries; deeply nested JSON).
 */
export type SpecialKind = 'fifo' | 'device' | 'folder' | 'proc';
export const SPECIAL_KINDS: SpecialKind[] = ['fifo', 'device', 'folder', 'proc'];

/** `<dir>/<kind>.<extension>`, a special file of that kind under a data file's name. */
export function specialFile(dir: string, kind: SpecialKind, extension: string): string {
  const path = join(dir, `${kind}${extension}`);
  switch (kind) {
    case 'fifo': {
      const made = spawnSync('mkfifo', [path]);
      if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr}`);
      break;
    }
    case 'device':
      symlinkSync('/dev/zero', path);
      break;
    case 'folder':
      mkdirSync(path);
      writeFileSync(join(path, 'inside.bin'), 'x');
      break;
    case 'proc':
      symlinkSync('/proc/self/status', path);
      break;
  }
  return path;
}

const MIB = 1024 * 1024;

/** Local file header and central directory fields of the first entry: uncompressed size set to `size`. */
function declareSize(zip: Uint8Array, size: number): Uint8Array {
  const out = zip.slice();
  const view = new DataView(out.buffer);
  view.setUint32(22, size, true);
  for (let i = out.length - 22 - 46; i >= 0; i--) {
    if (view.getUint32(i, true) === 0x02014b50) {
      view.setUint32(i + 24, size, true);
      break;
    }
  }
  return out;
}

function zeroImages(count: number): Uint8Array {
  return npyBytes(new Uint8Array(count * 784), [count, 28, 28]);
}

export interface Bomb {
  name: string;
  path: string;
  /** What the typed error must say. */
  refusal: RegExp;
}

export function writeBombs(dir: string): Record<string, Bomb> {
  const bombs: Record<string, Bomb> = {};
  const add = (key: string, name: string, data: Uint8Array | string, refusal: RegExp): void => {
    const path = join(dir, name);
    writeFileSync(path, data);
    bombs[key] = { name, path, refusal };
  };
  // 64 MiB of zeros packed to about 64 KiB: refused by its ratio before it is unpacked.
  add(
    'npzRatio',
    'ratio-bomb.npz',
    zipSync({ 'images.npy': zeroImages(Math.floor((64 * MIB) / 784)) }, { level: 1 }),
    /times its packed size, over the limit/,
  );
  // A small archive whose directory declares 3 GiB: over the unpacked limit, refused unpacked.
  add(
    'npzDeclared',
    'declared-bomb.npz',
    declareSize(zipSync({ 'images.npy': zeroImages(10) }), 3 * 1024 * MIB),
    /unpacks to more than/,
  );
  // Declares 1 KiB, holds 64 MiB: unpacking stops as soon as it passes what it declared.
  add(
    'npzLying',
    'lying-bomb.npz',
    declareSize(zipSync({ 'images.npy': zeroImages(Math.floor((64 * MIB) / 784)) }, { level: 1 }), 1024),
    /is larger than the 1024 bytes it declares/,
  );
  const entries: Record<string, Uint8Array> = {};
  for (let i = 0; i <= 10_000; i++) entries[`a${i}.txt`] = Uint8Array.of(1);
  add('npzEntries', 'many-entries.npz', zipSync(entries, { level: 0 }), /holds more than 10000 entries/);
  const idxHeader = (dims: number[]): Uint8Array => {
    const header = new Uint8Array(4 + 4 * dims.length);
    header[2] = 0x08;
    header[3] = dims.length;
    dims.forEach((d, i) => new DataView(header.buffer).setUint32(4 + 4 * i, d, false));
    return header;
  };
  const gz = (...parts: Uint8Array[]): Uint8Array => gzipSync(Buffer.concat(parts.map((p) => Buffer.from(p))));
  add(
    'idxHuge',
    'huge-images-idx3-ubyte.gz',
    gz(idxHeader([1, 60000, 60000]), new Uint8Array(MIB)),
    /over the limit of \d+ pixels/,
  );
  add(
    'idxDeclared',
    'declared-images-idx3-ubyte.gz',
    gz(idxHeader([100_000, 100, 100]), new Uint8Array(MIB)),
    /times its size, over the limit/,
  );
  add(
    'idxLying',
    'lying-images-idx3-ubyte.gz',
    gz(idxHeader([10, 28, 28]), new Uint8Array(64 * MIB)),
    /unpacks to more than the \d+ bytes its header declares/,
  );
  // A PNG signature and an IHDR declaring 100,000 x 100,000 pixels.
  const png = new Uint8Array(33);
  png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  new DataView(png.buffer).setUint32(16, 100_000, false);
  new DataView(png.buffer).setUint32(20, 100_000, false);
  png.set([8, 0, 0, 0, 0], 24);
  mkdirSync(join(dir, 'huge-png'));
  add('png', 'huge-png/huge.png', png, /100000 x 100000 pixels is over the limit/);
  // A real JPEG whose frame header is patched to 60,000 x 60,000.
  const small = jpeg.encode({ width: 16, height: 16, data: new Uint8Array(16 * 16 * 4) }, 90).data;
  const patched = Uint8Array.from(small);
  for (let i = 0; i < patched.length - 9; i++) {
    if (patched[i] === 0xff && patched[i + 1] === 0xc0) {
      new DataView(patched.buffer).setUint16(i + 5, 60000, false);
      new DataView(patched.buffer).setUint16(i + 7, 60000, false);
      break;
    }
  }
  mkdirSync(join(dir, 'huge-jpeg'));
  add('jpeg', 'huge-jpeg/huge.jpg', patched, /cannot be decoded as an image \(maxResolutionInMP limit exceeded/);
  add('json', 'deep.json', `${'['.repeat(200_000)}${']'.repeat(200_000)}`, /JSON nested deeper than 64 levels/);
  return bombs;
}
