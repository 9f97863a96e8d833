import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

/** The first `count` images of the shipped test set (28 x 28 bytes each) and their labels. */
export function fashionMnistSample(count: number): { images: Uint8Array[]; labels: number[] } {
  const images = gunzipSync(readFileSync('resources/data/t10k-images-idx3-ubyte.gz'));
  const labels = gunzipSync(readFileSync('resources/data/t10k-labels-idx1-ubyte.gz'));
  return {
    images: Array.from({ length: count }, (_, i) => images.subarray(16 + i * 784, 16 + (i + 1) * 784)),
    labels: Array.from(labels.subarray(8, 8 + count)),
  };
}

/**
 * Images [from, to) of the shipped test set as an IDX pair in `dir` (NAME-images-idx3-ubyte and
 * NAME-labels-idx1-ubyte beside it, which the app's sources find): disjoint halves of it fit and
 * evaluate without sharing an image. Returns the images file's path.
 */
export function embeddedIdxPart(dir: string, name: string, from: number, to: number): string {
  const images = gunzipSync(readFileSync('resources/data/t10k-images-idx3-ubyte.gz'));
  const labels = gunzipSync(readFileSync('resources/data/t10k-labels-idx1-ubyte.gz'));
  const count = to - from;
  const header = (magic: number, dims: number[]) => {
    const bytes = Buffer.alloc(4 + 4 * dims.length);
    bytes.writeUInt32BE(magic, 0);
    dims.forEach((d, i) => bytes.writeUInt32BE(d, 4 + 4 * i));
    return bytes;
  };
  const imagesPath = join(dir, `${name}-images-idx3-ubyte`);
  writeFileSync(
    imagesPath,
    Buffer.concat([header(0x803, [count, 28, 28]), images.subarray(16 + from * 784, 16 + to * 784)]),
  );
  writeFileSync(
    join(dir, `${name}-labels-idx1-ubyte`),
    Buffer.concat([header(0x801, [count]), labels.subarray(8 + from, 8 + to)]),
  );
  return imagesPath;
}
