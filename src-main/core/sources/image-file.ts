import jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { KnobError } from '../../../src-shared/errors';
import { inputLimit } from '../files/input-limits';
import { sha256Hex } from '../files/sha256';
import { readUserFile } from '../files/user-files';

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

/** PNG's IHDR: width and height are the first fields after the signature and chunk header. */
function pngDimensions(bytes: Uint8Array, path: string): { width: number; height: number } {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (bytes.length < 24 || signature.some((b, i) => bytes[i] !== b)) {
    throw new KnobError('INVALID_INPUT', `${path}: not a PNG file (bad signature)`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { width: view.getUint32(16, false), height: view.getUint32(20, false) };
}

/** Refuses dimensions whose pixels would not fit the limit, before the decoder allocates them. */
function checkPixels(width: number, height: number, path: string): void {
  const limit = inputLimit('pixels');
  if (width * height > limit) {
    throw new KnobError(
      'INVALID_INPUT',
      `${path}: ${width} x ${height} pixels is over the limit of ${limit} (raise it with --input-limit pixels=COUNT)`,
    );
  }
}

/** A decoded file with the size and SHA-256 of its bytes as read (the folder's identity is made of them). */
export interface DecodedImageFile extends DecodedImage {
  file: { sizeBytes: number; sha256: string };
}

export async function decodeImageFile(path: string): Promise<DecodedImageFile> {
  const bytes = await readUserFile(path, 'image');
  return { ...decodeImageBytes(bytes, path), file: { sizeBytes: bytes.length, sha256: sha256Hex(bytes) } };
}

function decodeImageBytes(bytes: Uint8Array, path: string): DecodedImage {
  const lower = path.toLowerCase();
  if (lower.endsWith('.png')) {
    const { width, height } = pngDimensions(bytes, path);
    checkPixels(width, height, path);
  }
  try {
    if (lower.endsWith('.png')) {
      const png = PNG.sync.read(Buffer.from(bytes));
      return fromRgba(png.data, png.width, png.height);
    }
    if (lower.endsWith('.jpg') || lower.endsWith('.jpeg')) {
      const image = jpeg.decode(bytes, {
        useTArray: true,
        formatAsRGBA: true,
        maxResolutionInMP: inputLimit('pixels') / 1e6,
        maxMemoryUsageInMB: 256,
      });
      return fromRgba(image.data, image.width, image.height);
    }
  } catch (error) {
    throw new KnobError('INVALID_INPUT', `${path}: cannot be decoded as an image (${(error as Error).message})`);
  }
  throw new KnobError('INVALID_INPUT', `${path}: not a PNG or JPEG file`);
}
