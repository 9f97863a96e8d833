import { createHash } from 'node:crypto';
import { basename, dirname, relative } from 'node:path';
import type { SourceIdentity } from '../../../src-shared/api/source-identity';
import { sha256Hex } from '../files/sha256';
import { hashUserFile, readUserFile } from '../files/user-files';
import type { FileKind } from '../files/input-limits';

/**
 * The identity of a source as it is opened (src-shared/api/source-identity.ts): a file hashed in
 * chunks as it is read, a folder by the hash of its sorted file list with each file's hash (taken
 * from the bytes decoded, so no file is read twice).
 */
export interface IdentityOptions {
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

export async function fileIdentity(
  path: string,
  kind: FileKind,
  options: IdentityOptions = {},
): Promise<SourceIdentity> {
  const { sizeBytes, sha256 } = await hashUserFile(path, kind, options);
  return { kind: 'file', name: basename(path), sizeBytes, sha256 };
}

/** A file's path, size and SHA-256, from the bytes it was read as (what a folder identity lists). */
export interface HashedFile {
  path: string;
  sizeBytes: number;
  sha256: string;
}

export function hashedFile(path: string, bytes: Uint8Array): HashedFile {
  return { path, sizeBytes: bytes.length, sha256: sha256Hex(bytes) };
}

/** A dataset file read whole, with its hash from the same bytes (a labels file beside images). */
export async function readHashedDatasetFile(path: string): Promise<{ bytes: Uint8Array; file: HashedFile }> {
  const bytes = await readUserFile(path, 'dataset');
  return { bytes, file: hashedFile(path, bytes) };
}

/**
 * Images and the labels file beside them (an IDX pair, images.npy with labels.npy) as one identity:
 * the file list of the two, named by both files, so a relabelled set is another source (the images'
 * hash alone named both, and a Knob model's provenance or a feature cache keyed on it could not tell
 * them apart). The labels are hashed from the bytes decoded (`labels`), the images in chunks as a
 * file source is; progress counts the images' bytes.
 */
export async function imagesAndLabelsIdentity(
  imagesPath: string,
  labels: HashedFile,
  options: IdentityOptions = {},
): Promise<SourceIdentity> {
  const images = { path: imagesPath, ...(await hashUserFile(imagesPath, 'dataset', options)) };
  const name = `${basename(imagesPath)} + ${basename(labels.path)}`;
  return folderIdentity(dirname(imagesPath), [images, labels], name);
}

/** A folder from the files it was read from, each with its size and SHA-256 as read. */
export function folderIdentity(
  folder: string,
  files: ReadonlyArray<HashedFile>,
  name = basename(folder),
): SourceIdentity {
  const lines = files.map((f) => `${relative(folder, f.path).split('\\').join('/')}\t${f.sha256}`).sort();
  const sha256 = createHash('sha256').update(lines.join('\n')).digest('hex');
  const sizeBytes = files.reduce((sum, f) => sum + f.sizeBytes, 0);
  return { kind: 'folder', name, fileCount: files.length, sizeBytes, sha256 };
}
