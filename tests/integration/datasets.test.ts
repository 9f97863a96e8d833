import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { corruptBytes } from '../../src-shared/corruptions';
import { frameSeed } from '../../src-shared/corruptions/schedule';
import { EMBEDDED_IMAGES_PATH, EMBEDDED_LABELS_PATH } from '../../src-main/core/datasets/embedded-dataset';
import { parseIdx, readIdxFile, serializeIdx, writeIdxFile } from '../../src-main/core/datasets/idx-file';

describe('embedded Fashion-MNIST test set', () => {
  it('is the 10,000-image test set, idx as Debian ships it', async () => {
    const images = await readIdxFile(EMBEDDED_IMAGES_PATH);
    const labels = await readIdxFile(EMBEDDED_LABELS_PATH);
    expect(images.dimensions).toEqual([10000, 28, 28]);
    expect(labels.dimensions).toEqual([10000]);
    expect(Math.max(...labels.data)).toBe(9);
  });
  it('IDX round trip, and typed errors naming the file for broken input', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'knob-idx-'));
    const array = { dimensions: [2, 3, 4], data: Uint8Array.from({ length: 24 }, (_, i) => i) };
    await writeIdxFile(join(dir, 'a.idx.gz'), array);
    const back = await readIdxFile(join(dir, 'a.idx.gz'));
    expect(back.dimensions).toEqual(array.dimensions);
    expect(Array.from(back.data)).toEqual(Array.from(array.data));
    const bytes = serializeIdx(array);
    expect(() => parseIdx(bytes.subarray(0, 20), 'cut.idx')).toThrow(/cut.idx: holds 4 data bytes, header says 24/);
    expect(() => parseIdx(Uint8Array.of(1, 2, 3, 4), 'x.idx')).toThrow(/x.idx: not an IDX file/);
    await expect(readIdxFile(join(dir, 'missing.idx'))).rejects.toThrow(
      /missing.idx: cannot be read \(does not exist\)/,
    );
  });
});

describe('knob corrupt', () => {
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ['bin/knob.mjs', 'corrupt', ...args], { encoding: 'utf8' });

  it('writes an IDX copy whose images are exactly the app corruption with the per-frame seed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'knob-corrupt-'));
    const out = join(dir, 'fog.idx');
    const result = run(
      '--input',
      EMBEDDED_IMAGES_PATH,
      '--corruption',
      'fog',
      '--severity',
      '4',
      '--seed',
      '9',
      '--offset',
      '10',
      '--limit',
      '5',
      '--out',
      out,
    );
    expect(result.status, result.stderr).toBe(0);
    const written = await readIdxFile(out);
    const source = await readIdxFile(EMBEDDED_IMAGES_PATH);
    expect(written.dimensions).toEqual([5, 28, 28]);
    for (let i = 0; i < 5; i++) {
      const expected = corruptBytes(source.data.subarray((10 + i) * 784, (11 + i) * 784), 28, 28, 1, {
        name: 'fog',
        severity: 4,
        seed: frameSeed(9, 10 + i),
      });
      expect(Buffer.from(written.data.subarray(i * 784, (i + 1) * 784)).equals(Buffer.from(expected))).toBe(true);
    }
  });
  it('writes a folder of PNG files, and refuses bad usage with exit code 2', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'knob-png-')), 'png');
    expect(
      run(
        '--input',
        EMBEDDED_IMAGES_PATH,
        '--corruption',
        'jpeg_compression',
        '--severity',
        '5',
        '--limit',
        '3',
        '--out-dir',
        dir,
      ).status,
    ).toBe(0);
    const files = readdirSync(dir).sort();
    expect(files).toEqual(['000000.png', '000001.png', '000002.png']);
    const png = PNG.sync.read(readFileSync(join(dir, files[0]!)));
    expect([png.width, png.height]).toEqual([28, 28]);
    expect(
      run('--input', EMBEDDED_IMAGES_PATH, '--corruption', 'snow', '--severity', '1', '--out', join(dir, 'x.idx'))
        .status,
    ).toBe(2);
    expect(
      run('--input', EMBEDDED_IMAGES_PATH, '--corruption', 'fog', '--severity', '9', '--out', join(dir, 'x.idx'))
        .status,
    ).toBe(2);
    const missing = run(
      '--input',
      join(dir, 'nope.idx'),
      '--corruption',
      'fog',
      '--severity',
      '1',
      '--out',
      join(dir, 'x.idx'),
    );
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/nope.idx: cannot be read/);
  });
});
