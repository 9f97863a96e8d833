import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { PNG } from 'pngjs';
import { KnobError } from '../../../src-shared/errors';
import { corruptBatch, imageFromBytes, imageToBytes, type CorruptionName } from '../../../src-shared/corruptions';
import { frameSeed } from '../../../src-shared/corruptions/schedule';
import { writeOutputFiles } from '../files/output-files';
import { readIdxFile, writeIdxFile } from './idx-file';

/**
 * Writes a corrupted copy of an IDX image set (N x H x W, grayscale) so the same corruptions can be
 * used outside the app (training, other tools). Image i uses seed frameSeed(seed, offset + i), the
 * same per-frame seed a stream gets, so a corrupted dataset and a corrupted stream agree.
 */
export interface CorruptDatasetOptions {
  imagesPath: string;
  corruption: CorruptionName;
  severity: number;
  seed: number;
  offset?: number;
  limit?: number;
  /** '.idx' or '.idx.gz' file, or a folder for PNG output. */
  out: string;
  format: 'idx' | 'png';
  onProgress?: (done: number, total: number) => void;
}

/** The same file under two names (the same path, or a link to it): writing one would overwrite the other. */
async function sameFile(a: string, b: string): Promise<boolean> {
  if (resolve(a) === resolve(b)) return true;
  try {
    const [x, y] = await Promise.all([stat(a), stat(b)]);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

export async function corruptDataset(
  options: CorruptDatasetOptions,
): Promise<{ images: number; width: number; height: number }> {
  if (options.format === 'idx' && (await sameFile(options.out, options.imagesPath))) {
    throw new KnobError('INVALID_INPUT', `${options.out}: is the input itself; write the corrupted copy elsewhere`);
  }
  const source = await readIdxFile(options.imagesPath);
  if (source.dimensions.length !== 3) {
    throw new KnobError(
      'INVALID_INPUT',
      `${options.imagesPath}: expected N x H x W grayscale images, got ${source.dimensions.join(' x ')}`,
    );
  }
  const [count, height, width] = source.dimensions;
  const offset = options.offset ?? 0;
  const limit = Math.min(options.limit ?? count - offset, count - offset);
  if (offset < 0 || offset >= count || limit <= 0)
    throw new KnobError('INVALID_INPUT', `offset ${offset} / limit ${options.limit} select no images of ${count}`);
  const pixels = width * height;
  const out = new Uint8Array(limit * pixels);
  const chunk = 256;
  for (let from = 0; from < limit; from += chunk) {
    const to = Math.min(limit, from + chunk);
    const images = Array.from({ length: to - from }, (_, j) =>
      imageFromBytes(
        source.data.subarray((offset + from + j) * pixels, (offset + from + j + 1) * pixels),
        width,
        height,
        1,
      ),
    );
    const seeds = Array.from({ length: to - from }, (_, j) => frameSeed(options.seed, offset + from + j));
    corruptBatch(images, options.corruption, options.severity, seeds).forEach((image, j) =>
      out.set(imageToBytes(image), (from + j) * pixels),
    );
    options.onProgress?.(to, limit);
  }
  if (options.format === 'idx') {
    await writeIdxFile(options.out, { dimensions: [limit, height, width], data: out });
  } else {
    const files = Array.from({ length: limit }, (_, i) => {
      const png = new PNG({ width, height, colorType: 0, inputColorType: 0, inputHasAlpha: false });
      png.data = Buffer.from(out.subarray(i * pixels, (i + 1) * pixels));
      return {
        name: `${String(offset + i).padStart(6, '0')}.png`,
        data: PNG.sync.write(png, { colorType: 0, inputColorType: 0, inputHasAlpha: false }),
      };
    });
    await writeOutputFiles(options.out, files);
  }
  return { images: limit, width, height };
}
