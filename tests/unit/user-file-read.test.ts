/**
 * readUserFile (src-main/core/files/user-files.ts), the one way a user's file is read whole: the
 * bytes of the file in a buffer of exactly their size (it once grew the buffer to twice the file
 * before finding the end, so an 826 MiB trace took 1.65 GB and a copy), and a file that grows while
 * being read is read to its new end, or refused once it passes its kind's limit.
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { readUserFile } from '../../src-main/core/files/user-files';
import { applyInputLimits, resetInputLimits } from '../../src-main/core/files/input-limits';

const dir = mkdtempSync(join(tmpdir(), 'knob-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => resetInputLimits(''));

const MIB = 2 ** 20;
/** Bytes that differ from place to place, so a misplaced chunk cannot pass. */
const pattern = (length: number, seed: number) => Uint8Array.from({ length }, (_, i) => (i * 131 + seed) % 251);
/** Byte-equal, compared without a diff (a diff of megabytes would take the test's memory). */
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);

describe('readUserFile', () => {
  for (const shared of [false, true])
    it(`holds the file's bytes in a buffer of exactly their size (${shared ? 'shared' : 'own'} memory)`, async () => {
      const path = join(dir, `whole-${shared}.bin`);
      const bytes = pattern(3 * MIB + 17, 3);
      writeFileSync(path, bytes);
      const read = await readUserFile(path, 'trace', () => undefined, shared);
      expect(same(read, bytes)).toBe(true);
      expect(read.buffer.byteLength).toBe(bytes.length);
      expect(read.buffer instanceof SharedArrayBuffer).toBe(shared);
    });

  it('reads a file that grows while being read to its new end', async () => {
    const path = join(dir, 'growing.bin');
    const first = pattern(17 * MIB, 5);
    const added = pattern(1000, 9);
    writeFileSync(path, first);
    let reports = 0;
    const read = await readUserFile(path, 'trace', () => {
      if (reports++ === 0) appendFileSync(path, added); // after the first 16 MiB
    });
    expect(read.length).toBe(first.length + added.length);
    expect(same(read.subarray(0, first.length), first)).toBe(true);
    expect(same(read.subarray(first.length), added)).toBe(true);
  });

  it('refuses a file that grows past its kind limit while being read, naming it', async () => {
    const path = join(dir, 'too-far.bin');
    writeFileSync(path, pattern(17 * MIB, 7));
    applyInputLimits('trace=17M', 'test');
    let reports = 0;
    const reading = readUserFile(path, 'trace', () => {
      if (reports++ === 0) appendFileSync(path, pattern(10, 1));
    });
    await expect(reading).rejects.toThrow(`${path}: grew past the trace file limit while being read`);
  });
});
