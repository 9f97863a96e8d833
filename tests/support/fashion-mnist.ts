import { readFileSync } from 'node:fs';
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
