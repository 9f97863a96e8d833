import { createHash } from 'node:crypto';

/** SHA-256 of bytes as 64 lowercase hex digits: how the app names a model, a trace or a bundle member. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
