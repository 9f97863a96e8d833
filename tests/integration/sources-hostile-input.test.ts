/**
 * Hostile input for sources and user files (issue 27 review): a file that changes while it is
 * hashed, text too long for one string, an ImageFolder with an empty class folder under sorted
 * order, and class indices past int32.
 */
import { appendFileSync, closeSync, mkdirSync, mkdtempSync, openSync, ftruncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { hashUserFile } from '../../src-main/core/files/user-files';
import { sha256Hex } from '../../src-main/core/files/sha256';
import { readLabelFile } from '../../src-main/core/recording/label-import';
import { openSource } from '../../src-main/core/sources/open-source';
import { refusalOf } from '../support/refusals';

const dir = mkdtempSync(join(tmpdir(), 'knob-sources-hostile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const target = { width: 28, height: 28, channels: 1 as const };

const refusal = refusalOf;

function png(value: number): Buffer {
  const file = new PNG({ width: 28, height: 28, colorType: 0, inputColorType: 0, inputHasAlpha: false });
  file.data = Buffer.alloc(28 * 28, value);
  return PNG.sync.write(file, { colorType: 0, inputColorType: 0, inputHasAlpha: false });
}

describe('hashing a file (source identity)', () => {
  it('hashes exactly the file, with progress in bytes', async () => {
    const path = join(dir, 'steady.bin');
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
    writeFileSync(path, bytes);
    const progress: number[] = [];
    const hashed = await hashUserFile(path, 'video', { onProgress: (done) => progress.push(done) });
    expect(hashed).toEqual({ sizeBytes: bytes.length, sha256: sha256Hex(bytes) });
    expect(progress.at(-1)).toBe(bytes.length);
  });

  it('a file that keeps growing while hashed is refused, not read forever', async () => {
    const path = join(dir, 'growing.bin');
    writeFileSync(path, Buffer.alloc(2 * 1024 * 1024, 1));
    let appended = 0;
    const error = await refusal(
      hashUserFile(path, 'video', {
        // every chunk read, the writer adds two more: without a bound the hash never ends
        onProgress: () => {
          if (appended++ < 50) appendFileSync(path, Buffer.alloc(2 * 1024 * 1024, 2));
        },
      }),
    );
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toMatch(/growing\.bin: changed while being hashed \(2097152 bytes when opened/);
    expect(appended).toBeLessThan(5);
  });

  it('a file that shrinks while hashed is refused', async () => {
    const path = join(dir, 'shrinking.bin');
    writeFileSync(path, Buffer.alloc(3 * 1024 * 1024, 1));
    const error = await refusal(
      hashUserFile(path, 'video', {
        onProgress: () => {
          const fd = openSync(path, 'r+');
          ftruncateSync(fd, 1024 * 1024);
          closeSync(fd);
        },
      }),
    );
    expect(error.message).toMatch(
      /shrinking\.bin: changed while being hashed \(3145728 bytes when opened, 1048576 now\)/,
    );
  });

  it('cancelling stops between chunks', async () => {
    const path = join(dir, 'cancelled.bin');
    writeFileSync(path, Buffer.alloc(4 * 1024 * 1024, 1));
    const controller = new AbortController();
    let chunks = 0;
    const error = await refusal(
      hashUserFile(path, 'video', { signal: controller.signal, onProgress: () => (chunks++, controller.abort()) }),
    );
    expect(error.code).toBe('CANCELLED');
    expect(chunks).toBe(1);
  });
});

describe('text too long for one string', () => {
  it('a 512 MiB label file under the table limit is refused naming the file', async () => {
    const path = join(dir, 'huge.csv');
    const fd = openSync(path, 'w');
    ftruncateSync(fd, 0x20000000); // sparse: no disk, but 2^29 characters once decoded
    closeSync(fd);
    const trace = { timestampsSeconds: new Float64Array(10), labelNames: ['a', 'b'] };
    const error = await refusal(readLabelFile(path, trace, 10, null));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toMatch(/huge\.csv: 512 MiB of text is more than one text can hold/);
    rmSync(path);
  }, 60_000);
});

describe('ImageFolder and manifests', () => {
  it('an empty class folder is refused in sorted order (it would shift the classes after it), and ignored by name', async () => {
    const root = join(dir, 'with-empty');
    for (const [folder, count] of [
      ['a', 2],
      ['b', 0],
      ['c', 2],
    ] as const) {
      mkdirSync(join(root, folder), { recursive: true });
      for (let i = 0; i < count; i++) writeFileSync(join(root, folder, `${i}.png`), png(40 * i));
    }
    const generated = { labelNames: ['0', '1', '2'], labelsFromMetadata: false };
    const error = await refusal(openSource({ kind: 'folder', path: root }, { target, ...generated }));
    expect(error.message).toMatch(
      /with-empty \(ImageFolder\): class folder\(s\) 'b' hold no images; .*sorted folder order/,
    );
    const byName = await openSource(
      { kind: 'folder', path: root },
      { target, labelNames: ['c', 'b', 'a'], labelsFromMetadata: true },
    );
    expect(byName.info.classMapping?.pairs.map((p) => [p.sourceName, p.modelIndex])).toEqual([
      ['a', 2],
      ['c', 0],
    ]);
  });

  it('a label_index past int32 is refused, not wrapped (4294967295 would become -1, unlabelled)', async () => {
    const root = join(dir, 'manifest-wrap');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'x.png'), png(10));
    writeFileSync(join(root, 'manifest.csv'), 'path,label_index\nx.png,4294967295\n');
    const error = await refusal(openSource({ kind: 'folder', path: root }, { target, labelNames: null }));
    expect(error.message).toMatch(/manifest\.csv: label 4294967295 of image 0 is not a class index/);
  });
});
