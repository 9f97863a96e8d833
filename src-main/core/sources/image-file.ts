import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { KnobError } from '../../../src-shared/errors';
import { readInputFile } from '../files/read-input-file';

/**
 * PNG (pngjs) and JPEG (jpeg-js) files to 8-bit grey or RGB pixels. Colour images stay RGB (alpha
 * dropped); images whose three channels are equal everywhere become grey, so a folder of grey PNGs
 * saved as RGB still feeds a grey model without a conversion step.
 */
export interface DecodedImage {
  width: number;
  height: number;
  channels: 1 | 3;
  data: Uint8Array;
}

export const IMAGE_EXTENSIONS = ['.png', '.jpg', '.jpeg'];

function fromRgba(rgba: Uint8Array, width: number, height: number): DecodedImage {
  const pixels = width * height;
  let grey = true;
  for (let p = 0; p < pixels && grey; p++) grey = rgba[4 * p] === rgba[4 * p + 1] && rgba[4 * p] === rgba[4 * p + 2];
  const channels = grey ? 1 : 3;
  const data = new Uint8Array(pixels * channels);
  for (let p = 0; p < pixels; p++) for (let c = 0; c < channels; c++) data[p * channels + c] = rgba[4 * p + c];
  return { width, height, channels, data };
}

export async function decodeImageFile(path: string): Promise<DecodedImage> {
  const bytes = await readInputFile(path);
  const lower = path.toLowerCase();
  try {
    if (lower.endsWith('.png')) {
      const png = PNG.sync.read(Buffer.from(bytes));
      return fromRgba(png.data, png.width, png.height);
    }
    if (lower.endsWith('.jpg') || lower.endsWith('.jpeg')) {
      const image = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxMemoryUsageInMB: 512 });
      return fromRgba(image.data, image.width, image.height);
    }
  } catch (error) {
    throw new KnobError('INVALID_INPUT', `${path}: cannot be decoded as an image (${(error as Error).message})`);
  }
  throw new KnobError('INVALID_INPUT', `${path}: not a PNG or JPEG file`);
}
