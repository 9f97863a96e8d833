import { z } from 'zod';

/**
 * Which source a recording came from, precisely enough to find it again (issue 27): a file by its
 * name, size and SHA-256 (hashed while it is read), a folder of images (or a dataset's images
 * and labels files, an IDX pair or images.npy with labels.npy, as a list of two) by the SHA-256 of
 * its sorted list of relative paths and file hashes, the embedded set by its file's hash, a camera by
 * the device label the renderer reports and its resolution. Traces, reports, bundles and the
 * desk's top bar show it.
 */
const sha256 = z.string().regex(/^[0-9a-f]{64}$/u);
const name = z.string().max(4096);

export const SourceIdentitySchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('file'), name, sizeBytes: z.number().int().nonnegative(), sha256 }),
  z.strictObject({
    kind: z.literal('folder'),
    name,
    fileCount: z.number().int().nonnegative(),
    sizeBytes: z.number().int().nonnegative(),
    /** SHA-256 of the lines `relative/path<TAB>file SHA-256`, sorted by path. */
    sha256,
  }),
  z.strictObject({
    kind: z.literal('camera'),
    /** The label the browser gives the device (empty until the user grants the camera). */
    deviceLabel: name,
    width: z.number().int().positive(),
    height: z.number().int().positive(),
  }),
]);
export type SourceIdentity = z.infer<typeof SourceIdentitySchema>;

/** One line: `name (size, SHA-256 0123456789ab...)` or the camera's label and resolution. */
export function describeSourceIdentity(identity: SourceIdentity | null): string {
  if (identity === null) return 'not recorded';
  switch (identity.kind) {
    case 'file':
      return `${identity.name} (${identity.sizeBytes} bytes, SHA-256 ${identity.sha256})`;
    case 'folder':
      return `${identity.name} (${identity.fileCount} files, ${identity.sizeBytes} bytes, SHA-256 of the file list ${identity.sha256})`;
    case 'camera':
      return `camera ${identity.deviceLabel === '' ? '(unnamed device)' : `'${identity.deviceLabel}'`} at ${identity.width} x ${identity.height}`;
  }
}

/** The short form for the top bar: the name and the hash's first 12 digits. */
export function shortSourceIdentity(identity: SourceIdentity | null): string {
  if (identity === null) return '';
  if (identity.kind === 'camera') return describeSourceIdentity(identity);
  return `${identity.name} · ${identity.sha256.slice(0, 12)}`;
}
