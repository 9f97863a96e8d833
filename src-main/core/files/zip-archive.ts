import { mkdir, open, realpath } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { zipSync } from 'fflate';
import * as yauzl from 'yauzl';
import { KnobError } from '../../../src-shared/errors';
import { inputLimit, RATIO_EXEMPT_BYTES } from './input-limits';

/**
 * Zip archives: bundles written with fflate (deterministic: fixed times, so the same members give
 * the same bytes); bundles and .npz files read with yauzl, which reads the central directory with
 * each entry's file attributes and stops an entry whose data inflates past its declared size with
 * an error (fflate's unzip silently truncates it there, and does not give the attributes).
 *
 * Reading refuses a hostile archive before any member is inflated, each case with its own message
 * that names the archive and the entry: too many entries, path traversal, absolute paths,
 * backslashes, symbolic links, duplicate names (also ones that differ only in case, which collide
 * on case-insensitive disks), a declared size over the per-entry or total limit, and a
 * compression ratio over the limit (per entry, and over the whole archive). While inflating, an entry that yields more bytes than it
 * declared is refused as soon as it does, so no more is held than the limits allow.
 */
export interface ArchiveLimits {
  maxEntries: number;
  maxEntryBytes: number;
  maxTotalBytes: number;
  /** Largest uncompressed / compressed ratio, for entries of more than RATIO_EXEMPT_BYTES. */
  maxCompressionRatio: number;
}

/** The app's input limits for archives (input-limits.ts: entries, decompressed, ratio). */
export function archiveLimits(): ArchiveLimits {
  return {
    maxEntries: inputLimit('entries'),
    maxEntryBytes: inputLimit('decompressed'),
    maxTotalBytes: inputLimit('decompressed'),
    maxCompressionRatio: inputLimit('ratio'),
  };
}

/** Fixed modification time of every member (the zip epoch), so bundles are reproducible. */
const FIXED_TIME = new Date('1980-01-01T00:00:00Z');

export interface ArchiveMember {
  path: string;
  bytes: Uint8Array;
}

export function writeArchive(members: readonly ArchiveMember[]): Uint8Array {
  // no prototype: a member named 'constructor' or '__proto__' is a name like any other
  const entries: Record<string, [Uint8Array, { level: 0 | 6; mtime: Date }]> = Object.create(null);
  for (const { path, bytes } of members) {
    checkMemberName(path, 'the bundle being written');
    // fflate's zipSync copies the names into a plain object, where this one would set its prototype
    if (path === '__proto__')
      throw new KnobError('INVALID_INPUT', `the bundle being written has a member named '__proto__'`);
    if (Object.hasOwn(entries, path))
      throw new KnobError('INVALID_INPUT', `the bundle being written has '${path}' twice`);
    // already-compressed members (ONNX weights, PNG) are stored: deflating them costs time for nothing
    entries[path] = [bytes, { level: /\.(png|onnx)$/.test(path) ? 0 : 6, mtime: FIXED_TIME }];
  }
  return zipSync(entries);
}

/** An archive whose directory passed every check; members are inflated one at a time, on request. */
export interface CheckedArchive {
  /** Every entry's name and declared (uncompressed) size, in the archive's order. */
  readonly declaredBytes: ReadonlyMap<string, number>;
  /** One member's bytes, refused before inflating when it declares more than `maxBytes`. */
  inflate(name: string, maxBytes: number): Promise<Uint8Array>;
}

/**
 * Reads the central directory and refuses a hostile archive before anything is inflated: too many
 * entries, a bad or duplicate name, a link, encryption, a declared size over the per-entry or total
 * limit, a compression ratio over the limit for one entry or for all of them together (many small
 * entries of zeros are each exempt from the per-entry ratio, not in sum). Entries `select` rejects
 * are checked by name and kind only, and cannot be inflated.
 */
export async function openArchive(
  bytes: Uint8Array,
  source: string,
  options: { limits?: ArchiveLimits; select?: (name: string) => boolean } = {},
): Promise<CheckedArchive> {
  const limits = options.limits ?? archiveLimits();
  const refuse = (message: string): never => {
    throw new KnobError('INVALID_INPUT', `${source}: ${message}`);
  };
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.fromBufferPromise(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
      decodeStrings: false,
      validateEntrySizes: true,
    });
  } catch (error) {
    return refuse(`not a readable zip archive (${error instanceof Error ? error.message : String(error)})`);
  }
  if (zip.entryCount > limits.maxEntries)
    refuse(`holds more than ${limits.maxEntries} entries (raise it with --input-limit entries=COUNT)`);
  const entries = new Map<string, yauzl.Entry>();
  const seen = new Map<string, string>();
  let total = 0;
  for await (const entry of zip.eachEntry()) {
    const raw = entry.fileName as unknown as Buffer;
    // strict: backslashes are kept, so they are refused below rather than turned into separators
    const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, raw, entry.extraFields, true);
    checkMemberName(name, source);
    const folded = name.normalize('NFC').toLowerCase();
    if (seen.has(folded))
      refuse(
        seen.get(folded) === name
          ? `entry '${name}' appears twice`
          : `entries '${seen.get(folded)}' and '${name}' differ only in case`,
      );
    seen.set(folded, name);
    // Unix file type in the high 16 bits of the external attributes: 0o120000 is a symbolic link.
    if (((entry.externalFileAttributes >>> 16) & 0o170000) === 0o120000) refuse(`entry '${name}' is a symbolic link`);
    if (entry.isEncrypted()) refuse(`entry '${name}' is encrypted`);
    if (options.select !== undefined && !options.select(name)) continue; // checked, not unpacked
    if (entry.uncompressedSize > limits.maxEntryBytes)
      refuse(
        `entry '${name}' unpacks to more than ${limits.maxEntryBytes} bytes (${entry.uncompressedSize}; raise it with --input-limit decompressed=SIZE)`,
      );
    total += entry.uncompressedSize;
    if (total > limits.maxTotalBytes)
      refuse(
        `unpacks to more than ${limits.maxTotalBytes} bytes in all (entry '${name}'; raise it with --input-limit decompressed=SIZE)`,
      );
    if (
      entry.uncompressedSize > RATIO_EXEMPT_BYTES &&
      entry.uncompressedSize > limits.maxCompressionRatio * Math.max(1, entry.compressedSize)
    )
      refuse(
        `entry '${name}' unpacks ${Math.round(entry.uncompressedSize / Math.max(1, entry.compressedSize))} times its packed size, over the limit of ${limits.maxCompressionRatio} (a decompression bomb?)`,
      );
    if (total > RATIO_EXEMPT_BYTES && total > limits.maxCompressionRatio * bytes.byteLength)
      refuse(
        `unpacks ${Math.round(total / bytes.byteLength)} times its ${bytes.byteLength} bytes in all by entry '${name}', over the limit of ${limits.maxCompressionRatio} (a decompression bomb?)`,
      );
    entries.set(name, entry);
  }
  return {
    declaredBytes: new Map([...entries].map(([name, entry]) => [name, entry.uncompressedSize])),
    inflate: (name, maxBytes) => {
      const entry = entries.get(name);
      if (entry === undefined) return refuse(`has no entry '${name}'`);
      if (entry.uncompressedSize > maxBytes)
        refuse(`entry '${name}' declares ${entry.uncompressedSize} bytes, more than the ${maxBytes} allowed for it`);
      return inflateEntry(zip, entry, name, refuse);
    },
  };
}

/** Every member the archive holds (or those `select` keeps), after every check of openArchive. */
export async function readArchive(
  bytes: Uint8Array,
  source: string,
  options: { limits?: ArchiveLimits; select?: (name: string) => boolean } = {},
): Promise<Map<string, Uint8Array>> {
  const archive = await openArchive(bytes, source, options);
  const members = new Map<string, Uint8Array>();
  for (const [name, size] of archive.declaredBytes) members.set(name, await archive.inflate(name, size));
  return members;
}

/** An entry's bytes, refused as soon as it yields more than it declared. */
async function inflateEntry(
  zip: yauzl.ZipFile,
  entry: yauzl.Entry,
  name: string,
  refuse: (message: string) => never,
): Promise<Uint8Array> {
  const out = new Uint8Array(entry.uncompressedSize);
  let at = 0;
  try {
    const stream = await zip.openReadStreamPromise(entry);
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (at + chunk.length > out.length) {
        stream.destroy();
        refuse(`entry '${name}' is larger than the ${entry.uncompressedSize} bytes it declares`);
      }
      out.set(chunk, at);
      at += chunk.length;
    }
  } catch (error) {
    if (error instanceof KnobError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    // yauzl's own size check (validateEntrySizes) says "too many bytes in the stream"
    if (/too many bytes/.test(message))
      refuse(`entry '${name}' is larger than the ${entry.uncompressedSize} bytes it declares`);
    refuse(`entry '${name}' cannot be read (${message})`);
  }
  if (at !== out.length) refuse(`entry '${name}' holds ${at} bytes, not the ${out.length} it declares`);
  return out;
}

/**
 * A member name a bundle may hold: relative, '/'-separated, no '.' or '..' segment, no empty
 * segment, no backslash or control character, and not a drive path.
 */
function checkMemberName(name: string, source: string): void {
  const refuse = (why: string): never => {
    throw new KnobError('INVALID_INPUT', `${source}: entry '${name}' ${why}`);
  };
  if (name.length === 0) refuse('has an empty name');
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) refuse('has an absolute path');
  if (name.includes('\\')) refuse('has a backslash in its path');
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  if (/[\u0000-\u001f\u007f]/.test(name)) refuse('has a control character in its name');
  const segments = name.split('/');
  if (segments.some((s) => s === '..')) refuse('leaves the archive (path traversal)');
  if (segments.some((s, i) => s === '.' || (s === '' && i < segments.length - 1)))
    refuse('has an empty or "." path segment');
}

/**
 * Writes every member under `targetDir` (which must exist), after readArchive's checks: each file
 * created new (never over an existing file or through a link), in directories that resolve inside
 * the target. Nothing is written when a check fails.
 */
export async function extractArchive(bytes: Uint8Array, source: string, targetDir: string): Promise<string[]> {
  const members = await readArchive(bytes, source);
  const root = await realpath(targetDir);
  const written: string[] = [];
  for (const [name, content] of members) {
    if (name.endsWith('/')) continue; // a directory entry
    const path = join(root, ...name.split('/'));
    await mkdir(dirname(path), { recursive: true });
    const parent = await realpath(dirname(path));
    const inside = relative(root, parent);
    if (inside.startsWith('..') || inside.split(sep).includes('..'))
      throw new KnobError('INVALID_INPUT', `${source}: entry '${name}' would be written outside ${targetDir}`);
    const handle = await open(path, 'wx');
    try {
      await handle.writeFile(content);
    } finally {
      await handle.close();
    }
    written.push(path);
  }
  return written;
}
