import { createHash } from 'node:crypto';

/** SHA-256 of bytes as 64 lowercase hex digits: how the app names a model, a trace or a bundle member. */
export function sha256Hex(bytes: Uint8Array | readonly Uint8Array[]): string {
  const hash = createHash('sha256');
  // a file's chunks in order hash as its bytes (a trace's, never joined: trace-arrow.ts)
  for (const chunk of bytes instanceof Uint8Array ? [bytes] : bytes) hash.update(chunk);
  return hash.digest('hex');
}
