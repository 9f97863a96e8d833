import { createHash } from 'node:crypto';
import { constants, type Dirent, type Stats } from 'node:fs';
import { open, opendir, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { KnobError } from '../../../src-shared/errors';
import { descriptorExhaustion } from './descriptor-exhaustion';
import { formatBytes, inputLimit, type FileKind } from './input-limits';

/**
 * The one way the app opens what a user names. A file must be a regular file: it is opened first
 * (non-blocking, so a FIFO cannot hold the open, and the I/O pool never waits on one) and then
 * checked through its handle, so a symlink swapped between a check and the open cannot slip
 * through; FIFOs, devices, sockets and anything in /proc or /sys are refused with a typed error
 * naming the path; the size is checked against the limit of its kind before anything is read, and
 * the read itself stops at the limit (a file that grows while being read). A folder must be a real
 * folder, likewise outside /proc and /sys.
 */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const VIRTUAL_ROOTS = ['/proc', '/sys'];

function typeOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

function failed(path: string, error: unknown, doing: string): KnobError {
  if (error instanceof KnobError) return error;
  const exhausted = descriptorExhaustion(path, error, doing);
  if (exhausted !== null) return exhausted;
  const code = (error as NodeJS.ErrnoException).code;
  const reason =
    code === 'ENOENT'
      ? 'does not exist'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : (code ?? 'error');
  return new KnobError('INVALID_INPUT', `${path}: cannot ${doing} (${reason})`);
}

function isVirtual(realPath: string): boolean {
  return VIRTUAL_ROOTS.some((root) => realPath === root || realPath.startsWith(`${root}/`));
}

/** Where an open handle really points (Linux: the kernel's own answer for the descriptor). */
async function realPathOf(handle: FileHandle, path: string): Promise<string> {
  if (process.platform === 'linux') {
    try {
      return await readlink(`/proc/self/fd/${handle.fd}`);
    } catch {
      // /proc not mounted: fall back to the path's own resolution.
    }
  }
  return realpath(path);
}

/** Opens `path` as a regular file of `kind`; the caller closes the handle. */
async function openRegularFile(path: string, kind: FileKind): Promise<{ handle: FileHandle; size: number }> {
  let handle: FileHandle;
  try {
    handle = await open(path, OPEN_FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EISDIR')
      throw new KnobError('INVALID_INPUT', `${path}: is a folder, not a file`);
    throw failed(path, error, 'be read');
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile())
      throw new KnobError('INVALID_INPUT', `${path}: is ${typeOf(stats)}, not a file that can be read as data`);
    if (isVirtual(await realPathOf(handle, path))) {
      throw new KnobError('INVALID_INPUT', `${path}: is in /proc or /sys (a view of the system, not a data file)`);
    }
    const limit = inputLimit(kind);
    if (stats.size > limit) {
      throw new KnobError(
        'INVALID_INPUT',
        `${path}: ${formatBytes(stats.size)} is over the ${kind} file limit of ${formatBytes(limit)} (raise it with --input-limit ${kind}=SIZE or KNOB_INPUT_LIMITS)`,
      );
    }
    return { handle, size: stats.size };
  } catch (error) {
    await handle.close();
    throw failed(path, error, 'be read');
  }
}

/** A long read reports progress every this many bytes. */
const READ_CHUNK_BYTES = 16 << 20;

/** The whole file, checked as above. */
export async function readUserFile(
  path: string,
  kind: FileKind,
  /** Bytes read so far and the file's size, after each 16 MiB (a long read shows itself). */
  onProgress?: (bytesRead: number, size: number) => void,
  /** Read into shared memory (a SharedArrayBuffer): views of it reach worker threads without a copy. */
  shared = false,
): Promise<Uint8Array> {
  const { handle, size } = await openRegularFile(path, kind);
  const allocate = (bytes: number) => new Uint8Array(shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));
  try {
    const limit = inputLimit(kind);
    let buffer = allocate(size);
    let filled = 0;
    for (;;) {
      if (filled === buffer.length) {
        // Full: one byte more says whether the file grew while being read. Probing before growing
        // matters: growing first doubled every read (an 826 MiB trace took 1.65 GB and a copy).
        const probe = new Uint8Array(1);
        const { bytesRead } = await handle.read(probe, 0, 1, filled);
        if (bytesRead === 0) break;
        if (buffer.length >= limit)
          throw new KnobError('INVALID_INPUT', `${path}: grew past the ${kind} file limit while being read`);
        const grown = allocate(Math.min(limit, Math.max(64 * 1024, buffer.length * 2)));
        grown.set(buffer);
        grown[filled++] = probe[0]!;
        buffer = grown;
        continue;
      }
      const length =
        onProgress === undefined ? buffer.length - filled : Math.min(READ_CHUNK_BYTES, buffer.length - filled);
      const { bytesRead } = await handle.read(buffer, filled, length, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      onProgress?.(filled, size);
    }
    return filled === buffer.length ? buffer : buffer.subarray(0, filled);
  } catch (error) {
    throw failed(path, error, 'be read');
  } finally {
    await handle.close();
  }
}

const HASH_CHUNK_BYTES = 1 << 20;

/**
 * The file's size and SHA-256, read in 1 MiB chunks (a video of hours is never held in memory),
 * checked as above; progress in bytes, CANCELLED when `signal` aborts between chunks. Exactly the
 * size it had when opened is read: a file that grows or shrinks meanwhile (still being written)
 * is refused, since no hash names it, and a file that keeps growing cannot keep the read going.
 */
export async function hashUserFile(
  path: string,
  kind: FileKind,
  options: { onProgress?: (doneBytes: number, totalBytes: number) => void; signal?: AbortSignal } = {},
): Promise<{ sizeBytes: number; sha256: string }> {
  const { handle, size } = await openRegularFile(path, kind);
  try {
    const hash = createHash('sha256');
    const chunk = new Uint8Array(HASH_CHUNK_BYTES);
    let done = 0;
    const changed = (now: string): KnobError =>
      new KnobError(
        'INVALID_INPUT',
        `${path}: changed while being hashed (${size} bytes when opened, ${now}); a file still being written has no identity yet: open it once it is complete`,
      );
    while (done < size) {
      if (options.signal?.aborted) throw new KnobError('CANCELLED', `${path}: hashing cancelled`);
      const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, size - done), done);
      if (bytesRead === 0) throw changed(`${done} now`);
      hash.update(chunk.subarray(0, bytesRead));
      done += bytesRead;
      options.onProgress?.(done, size);
    }
    if ((await handle.read(chunk, 0, 1, size)).bytesRead > 0) throw changed('more now');
    return { sizeBytes: size, sha256: hash.digest('hex') };
  } catch (error) {
    throw failed(path, error, 'be read');
  } finally {
    await handle.close();
  }
}

/**
 * A user file's bytes as UTF-8 text. A JavaScript string holds at most 2^29 - 24 characters: a
 * table under its limit (1 GiB) can be more, and is refused naming the file rather than ending in
 * the engine's own error.
 */
export function userText(bytes: Uint8Array, path: string): string {
  try {
    return new TextDecoder('utf-8').decode(bytes);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_STRING_TOO_LONG' || error instanceof RangeError)
      throw new KnobError(
        'INVALID_INPUT',
        `${path}: ${formatBytes(bytes.length)} of text is more than one text can hold (about 512 Mi characters); split the file`,
      );
    throw error;
  }
}

/** The file as UTF-8 text (settings, sidecars, tables). */
export async function readUserText(path: string, kind: FileKind): Promise<string> {
  return userText(await readUserFile(path, kind), path);
}

/** Checks a file that another program will read (a video for ffmpeg); returns its size. */
export async function checkUserFile(path: string, kind: FileKind): Promise<number> {
  const { handle, size } = await openRegularFile(path, kind);
  await handle.close();
  return size;
}

/** Whether `path` is a real folder (not one in /proc or /sys); false when it is anything else or absent. */
export async function isUserFolder(path: string): Promise<boolean> {
  let stats: Stats;
  try {
    stats = await stat(path);
  } catch {
    return false;
  }
  if (!stats.isDirectory()) return false;
  try {
    return !isVirtual(await realpath(path));
  } catch {
    return false;
  }
}

/** Refuses anything but a real folder, naming the path. */
export async function checkUserFolder(path: string): Promise<void> {
  if (await isUserFolder(path)) return;
  let detail = 'not a folder';
  try {
    const stats = await stat(path);
    detail = stats.isDirectory()
      ? 'is in /proc or /sys (a view of the system, not a data folder)'
      : `is ${typeOf(stats)}`;
  } catch (error) {
    throw failed(path, error, 'be listed');
  }
  throw new KnobError('INVALID_INPUT', `${path}: ${detail}`);
}

/** The entries of a real folder, at most the folder limit of them (sorted by name). */
export async function listUserFolder(path: string): Promise<Dirent[]> {
  await checkUserFolder(path);
  const limit = inputLimit('folder');
  const entries: Dirent[] = [];
  try {
    for await (const entry of await opendir(path)) {
      if (entries.length >= limit) {
        throw new KnobError(
          'INVALID_INPUT',
          `${path}: holds more than ${limit} entries (raise it with --input-limit folder=COUNT)`,
        );
      }
      entries.push(entry);
    }
  } catch (error) {
    throw failed(path, error, 'be listed');
  }
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Whether anything of this name exists in a folder (an optional companion file such as labels.npy);
 * reading it then refuses what is not a regular file, rather than passing over it in silence.
 */
export async function hasUserFile(folder: string, name: string): Promise<boolean> {
  try {
    await stat(join(folder, name));
    return true;
  } catch {
    return false;
  }
}
