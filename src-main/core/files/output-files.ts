import { randomBytes } from 'node:crypto';
import { lstat, mkdir, open, realpath, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { stopIfCancelled, type CancelSignal } from '../../../src-shared/cancel-signal';
import { KnobError } from '../../../src-shared/errors';
import { descriptorExhaustion } from './descriptor-exhaustion';

/**
 * Outputs are written so that a failure leaves nothing behind. The folder is checked first: its
 * nearest existing ancestor must be a real folder outside /proc and /sys (where a recursive mkdir
 * would spin forever), and folders that had to be created are removed again on failure. Every file
 * of a group is written under a temporary name beside its target, and only when all are written are
 * they renamed into place; a target that cannot be replaced (a folder of that name) fails the group
 * before the first rename. So an output folder holds either the complete new outputs or what it
 * held before.
 */
export interface OutputFile {
  name: string;
  /** The file's bytes, or its chunks in order (a large file written without joining them first). */
  data: Uint8Array | string | readonly Uint8Array[];
}

/** The byte length of an output's data. */
export function outputLength(data: OutputFile['data']): number {
  if (typeof data === 'string') return Buffer.byteLength(data);
  if (data instanceof Uint8Array) return data.byteLength;
  return data.reduce((sum, chunk) => sum + chunk.byteLength, 0);
}

/** An output's data as one array of bytes (what needs them at once: a zip member). */
export function outputBytes(data: OutputFile['data']): Uint8Array {
  if (typeof data === 'string') return new TextEncoder().encode(data);
  return data instanceof Uint8Array ? data : joinedChunks(data);
}

/** Chunks joined into one array. */
export function joinedChunks(chunks: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(outputLength(chunks));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** Chunks written per writev call (under every platform's IOV_MAX). */
const CHUNKS_PER_WRITE = 256;

/**
 * Bytes per write call at most: Node 20 reports a writev's bytes written as a signed 32-bit number
 * (a 2.24 GB group came back negative, and 4.5 GB as 8.8 GB written), so no call is given 2^31.
 */
const WRITE_MAX_BYTES = 1 << 30;

/**
 * `chunks` in write calls' groups: at most `maxChunks` pieces and `maxBytes` bytes a group, a chunk
 * larger than that cut into pieces (views); empty chunks left out.
 */
export function writeGroups(
  chunks: readonly Uint8Array[],
  maxBytes = WRITE_MAX_BYTES,
  maxChunks = CHUNKS_PER_WRITE,
): Uint8Array[][] {
  const groups: Uint8Array[][] = [];
  let group: Uint8Array[] = [];
  let bytes = 0;
  for (const chunk of chunks)
    for (let at = 0; at < chunk.byteLength; at += maxBytes) {
      const piece = chunk.subarray(at, Math.min(chunk.byteLength, at + maxBytes));
      if (group.length === maxChunks || bytes + piece.byteLength > maxBytes) {
        groups.push(group);
        group = [];
        bytes = 0;
      }
      group.push(piece);
      bytes += piece.byteLength;
    }
  if (group.length > 0) groups.push(group);
  return groups;
}

/** Writes `data` to a new file (`wx`: never over an existing one). */
async function writeNewFile(path: string, data: OutputFile['data']): Promise<void> {
  if (typeof data === 'string' || data instanceof Uint8Array) {
    await writeFile(path, data, { flag: 'wx' });
    return;
  }
  const handle = await open(path, 'wx');
  const advanced = (bytesWritten: number): number => {
    if (!(bytesWritten > 0)) throw new Error(`a write made no progress (${bytesWritten} bytes)`);
    return bytesWritten;
  };
  try {
    for (const group of writeGroups(data)) {
      let written = advanced((await handle.writev(group)).bytesWritten);
      // a short write (rare on regular files): the rest of the group, piece by piece
      for (const piece of group) {
        if (written >= piece.byteLength) {
          written -= piece.byteLength;
          continue;
        }
        for (let at = written; at < piece.byteLength;) at += advanced((await handle.write(piece, at)).bytesWritten);
        written = 0;
      }
    }
  } finally {
    await handle.close();
  }
}

const VIRTUAL_ROOTS = ['/proc', '/sys'];

function outputError(path: string, error: unknown, doing: string): KnobError {
  if (error instanceof KnobError) return error;
  const exhausted = descriptorExhaustion(path, error, doing);
  if (exhausted !== null) return exhausted;
  const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return new KnobError('INVALID_INPUT', `${path}: cannot ${doing} (${code})`);
}

/**
 * Checks that outputs can go to `dir` without creating anything: its nearest existing ancestor must
 * be a real folder outside /proc and /sys. Returns the missing folders, outermost first. Commands
 * that work long before they write call it first, so a bad --out fails at once.
 */
export async function checkOutputFolder(dir: string): Promise<string[]> {
  const missing: string[] = [];
  let existing = resolve(dir);
  for (;;) {
    try {
      await lstat(existing);
      break;
    } catch (error) {
      // ENOTDIR: something above is a file; walking up finds it and says so.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw outputError(existing, error, 'be used as an output folder');
      missing.unshift(existing);
      const parent = dirname(existing);
      if (parent === existing) break;
      existing = parent;
    }
  }
  let real: string;
  try {
    real = await realpath(existing);
    if (!(await stat(real)).isDirectory()) {
      throw new KnobError('INVALID_INPUT', `${existing}: is not a folder, so nothing can be written in it`);
    }
  } catch (error) {
    throw outputError(existing, error, 'be used as an output folder');
  }
  if (VIRTUAL_ROOTS.some((root) => real === root || real.startsWith(`${root}/`))) {
    throw new KnobError('INVALID_INPUT', `${dir}: is in /proc or /sys, not a place for output files`);
  }
  return missing;
}

/** Makes sure `dir` exists as a real folder; returns the folders created for it (outermost first). */
async function prepareFolder(dir: string): Promise<string[]> {
  const missing = await checkOutputFolder(dir);
  for (const folder of missing) {
    try {
      await mkdir(folder);
    } catch (error) {
      await removeFolders(missing.slice(0, missing.indexOf(folder)));
      throw outputError(folder, error, 'be created');
    }
  }
  return missing;
}

async function removeFolders(created: string[]): Promise<void> {
  for (const folder of [...created].reverse()) await rmdir(folder).catch(() => undefined);
}

/** Writes a group of files into `dir`, all or nothing; returns their paths. */
export async function writeOutputFiles(
  dir: string,
  files: OutputFile[],
  /** A cancel that arrives while the files are written stops before the first rename: nothing is replaced. */
  cancel?: { signal: CancelSignal; what: string },
): Promise<string[]> {
  const created = await prepareFolder(dir);
  const tag = randomBytes(4).toString('hex');
  const written: string[] = [];
  try {
    for (const file of files) {
      const target = join(dir, file.name);
      try {
        const existing = await lstat(target);
        if (existing.isDirectory())
          throw new KnobError('INVALID_INPUT', `${target}: is a folder, so the output file cannot be written there`);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw outputError(target, error, 'be written');
      }
      const temporary = join(dir, `.${basename(file.name)}.${tag}.partial`);
      written.push(temporary);
      try {
        await writeNewFile(temporary, file.data);
      } catch (error) {
        throw outputError(target, error, 'be written');
      }
    }
    stopIfCancelled(cancel?.signal, `${cancel?.what} was cancelled`);
    const paths: string[] = [];
    for (let i = 0; i < files.length; i++) {
      const target = join(dir, files[i].name);
      await rename(written[i], target).catch((error: unknown) => {
        throw outputError(target, error, 'be written');
      });
      paths.push(target);
    }
    return paths;
  } catch (error) {
    await Promise.all(written.map((path) => rm(path, { force: true })));
    await removeFolders(created);
    throw error;
  }
}

/**
 * An output file (a command's --out F, a path the desk was given): its folder checked as
 * checkOutputFolder checks one, and the path not a folder itself, so work fails at once instead of
 * after it is done.
 */
export async function checkOutputFile(path: string): Promise<void> {
  await checkOutputFolder(dirname(path));
  const existing = await stat(path).catch(() => null);
  if (existing?.isDirectory())
    throw new KnobError('INVALID_INPUT', `${path}: is a folder, so the output file cannot be written there`);
}

/** One file, atomically (a trace saved from the desk, a table, a card). */
export async function writeOutputFile(path: string, data: OutputFile['data']): Promise<string> {
  const [written] = await writeOutputFiles(dirname(path), [{ name: basename(path), data }]);
  return written;
}
