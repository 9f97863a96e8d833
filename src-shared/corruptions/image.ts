/**
 * Images for corruptions: row-major height x width x channels, values in [0, 1], float32.
 * The canonical exchange format is 8-bit (Fashion-MNIST, camera frames, PNG/JPEG): corruptions
 * read and write bytes, so "same seed, same bytes" is checkable.
 */
export interface ImageFrame {
  width: number;
  height: number;
  channels: 1 | 3;
  data: Float32Array;
}

export function imageFromBytes(bytes: ArrayLike<number>, width: number, height: number, channels: 1 | 3): ImageFrame {
  const data = new Float32Array(width * height * channels);
  for (let i = 0; i < data.length; i++) data[i] = bytes[i] / 255;
  return { width, height, channels, data };
}

/** Clips to [0, 1] and rounds to 8 bits (NaN, which no corruption produces, would become 0). */
export function imageToBytes(image: ImageFrame): Uint8Array {
  const out = new Uint8Array(image.data.length);
  for (let i = 0; i < out.length; i++) {
    const v = image.data[i];
    out[i] = v >= 1 ? 255 : v > 0 ? Math.round(v * 255) : 0;
  }
  return out;
}

export function blankLike(image: ImageFrame): ImageFrame {
  return {
    width: image.width,
    height: image.height,
    channels: image.channels,
    data: new Float32Array(image.data.length),
  };
}

export function mapPixels(image: ImageFrame, f: (value: number, index: number) => number): ImageFrame {
  const out = blankLike(image);
  for (let i = 0; i < out.data.length; i++) out.data[i] = f(image.data[i], i);
  return out;
}

/** Reflect-101 index (scipy 'mirror' / OpenCV BORDER_REFLECT_101) into [0, n). */
export function reflectIndex(i: number, n: number): number {
  if (n === 1) return 0;
  const period = 2 * (n - 1);
  let k = ((i % period) + period) % period;
  if (k >= n) k = period - k;
  return k;
}

/** Bilinear sample of channel c at real coordinates (x, y), reflecting outside the image. */
export function sampleBilinear(image: ImageFrame, x: number, y: number, c: number): number {
  const { width: w, height: h, channels: ch, data } = image;
  const x0 = Math.floor(x);
  const y0 = Math.floor(y);
  const fx = x - x0;
  const fy = y - y0;
  const at = (xi: number, yi: number): number => data[(reflectIndex(yi, h) * w + reflectIndex(xi, w)) * ch + c];
  return (
    (1 - fy) * ((1 - fx) * at(x0, y0) + fx * at(x0 + 1, y0)) +
    fy * ((1 - fx) * at(x0, y0 + 1) + fx * at(x0 + 1, y0 + 1))
  );
}

/** Convolution with a (2r+1) x (2r+1) kernel, per channel, reflecting at the borders. */
export function convolve(image: ImageFrame, kernel: Float64Array, radius: number): ImageFrame {
  const { width: w, height: h, channels: ch, data } = image;
  const out = blankLike(image);
  const size = 2 * radius + 1;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      for (let c = 0; c < ch; c++) {
        let sum = 0;
        for (let ky = 0; ky < size; ky++) {
          const yy = reflectIndex(y + ky - radius, h);
          for (let kx = 0; kx < size; kx++) {
            const weight = kernel[ky * size + kx];
            if (weight !== 0) sum += weight * data[(yy * w + reflectIndex(x + kx - radius, w)) * ch + c];
          }
        }
        out.data[(y * w + x) * ch + c] = sum;
      }
    }
  }
  return out;
}

/** Separable Gaussian blur (sigma in pixels), truncated at 4 sigma, reflecting at the borders. */
export function gaussianBlur(image: ImageFrame, sigma: number): ImageFrame {
  if (sigma <= 0) return { ...image, data: Float32Array.from(image.data) };
  const radius = Math.max(1, Math.ceil(4 * sigma));
  const weights = new Float64Array(2 * radius + 1);
  let total = 0;
  for (let i = -radius; i <= radius; i++) total += weights[i + radius] = Math.exp(-(i * i) / (2 * sigma * sigma));
  for (let i = 0; i < weights.length; i++) weights[i] /= total;
  const { width: w, height: h, channels: ch } = image;
  const pass = (source: ImageFrame, horizontal: boolean): ImageFrame => {
    const out = blankLike(source);
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        for (let c = 0; c < ch; c++) {
          let sum = 0;
          for (let i = -radius; i <= radius; i++) {
            const xx = horizontal ? reflectIndex(x + i, w) : x;
            const yy = horizontal ? y : reflectIndex(y + i, h);
            sum += weights[i + radius] * source.data[(yy * w + xx) * ch + c];
          }
          out.data[(y * w + x) * ch + c] = sum;
        }
      }
    }
    return out;
  };
  return pass(pass(image, true), false);
}
