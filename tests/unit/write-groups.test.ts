/**
 * How a file's chunks are handed to the write calls (output-files.ts writeGroups): in order, none
 * lost or repeated, no group over its byte or chunk limit, a chunk larger than the byte limit cut
 * into views. Node 20 reports a writev's bytes as a signed 32-bit number, so a group of 2^31 bytes
 * or more would read as a short or negative write: the real limit is 1 GiB, which a test cannot
 * allocate here, so the same code runs with small limits.
 */
import { describe, expect, it } from 'vitest';
import { writeGroups } from '../../src-main/core/files/output-files';

describe('write groups', () => {
  it('keep every byte in order within both limits, cutting large chunks', () => {
    const chunks = [0, 5, 1, 23, 0, 7, 7, 64, 2].map((length, c) =>
      Uint8Array.from({ length }, (_, i) => (c * 41 + i) & 255),
    );
    const groups = writeGroups(chunks, 10, 3);
    for (const group of groups) {
      expect(group.length).toBeLessThanOrEqual(3);
      expect(group.reduce((sum, piece) => sum + piece.byteLength, 0)).toBeLessThanOrEqual(10);
      for (const piece of group) expect(piece.byteLength).toBeGreaterThan(0);
    }
    expect(Buffer.concat(groups.flat())).toEqual(Buffer.concat(chunks));
    // the 64-byte chunk is cut into views of itself, not copies
    expect(groups.flat().filter((piece) => piece.buffer === chunks[7]!.buffer).length).toBe(7);
  });
});
