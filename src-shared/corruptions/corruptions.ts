import { decode as decodeJpeg, encode as encodeJpeg } from 'jpeg-js';
import { KnobError } from '../errors';
import { normalDraw, seededRandom, type RandomSource } from '../random';
import { CORRUPTION_TABLE, isCorruptionName, type CorruptionName } from './corruption-table';
import {
  blankLike,
  convolve,
  gaussianBlur,
  imageFromBytes,
  imageToBytes,
  mapPixels,
  reflectIndex,
  sampleBilinear,
  type ImageFrame,
} from './image';

/**
 * The corruptions of CORRUPTION_TABLE, pure and seeded: the same image, corruption, severity and
 * seed give the same bytes, in Node, in the renderer and in a Worker.
 */
export interface CorruptionSpec {
  name: CorruptionName;
  severity: number;
  seed: number;
}

function parameter(name: CorruptionName, severity: number): [number, number] {
  const row = CORRUPTION_TABLE[name];
  return [row.values[severity - 1], row.secondValues?.[severity - 1] ?? 0];
}

function lengthScale(image: ImageFrame): number {
  return Math.min(image.width, image.height) / 28;
}

function poisson(lambda: number, random: RandomSource): number {
  if (lambda > 30) return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * normalDraw(random)));
  const limit = Math.exp(-lambda);
  let k = 0;
  let p = random();
  while (p > limit) {
    k++;
    p *= random();
  }
  return k;
}

function rgbToHsv(r: number, g: number, b: number): [number, number, number] {
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const d = max - min;
  let h = 0;
  if (d > 0) {
    if (max === r) h = ((g - b) / d) % 6;
    else if (max === g) h = (b - r) / d + 2;
    else h = (r - g) / d + 4;
    h /= 6;
    if (h < 0) h += 1;
  }
  return [h, max === 0 ? 0 : d / max, max];
}

function hsvToRgb(h: number, s: number, v: number): [number, number, number] {
  const i = Math.floor(h * 6);
  const f = h * 6 - i;
  const p = v * (1 - s);
  const q = v * (1 - f * s);
  const t = v * (1 - (1 - f) * s);
  switch (((i % 6) + 6) % 6) {
    case 0:
      return [v, t, p];
    case 1:
      return [q, v, p];
    case 2:
      return [p, v, t];
    case 3:
      return [p, q, v];
    case 4:
      return [t, p, v];
    default:
      return [v, p, q];
  }
}

function mapHsv(image: ImageFrame, f: (h: number, s: number, v: number) => [number, number, number]): ImageFrame {
  const out = blankLike(image);
  for (let p = 0; p < image.width * image.height; p++) {
    const [h, s, v] = rgbToHsv(image.data[3 * p], image.data[3 * p + 1], image.data[3 * p + 2]);
    const [h2, s2, v2] = f(h, s, v);
    const [r, g, b] = hsvToRgb(h2, Math.min(1, Math.max(0, s2)), Math.min(1, Math.max(0, v2)));
    out.data[3 * p] = r;
    out.data[3 * p + 1] = g;
    out.data[3 * p + 2] = b;
  }
  return out;
}

/** Diamond-square plasma fractal on a 2^k grid covering the image, values in [0, 1]. */
function plasmaFractal(size: number, wibbleDecay: number, random: RandomSource): Float64Array {
  const map = new Float64Array(size * size);
  let step = size;
  let wibble = 100;
  const at = (y: number, x: number): number => map[(((y % size) + size) % size) * size + (((x % size) + size) % size)];
  while (step >= 2) {
    const half = step / 2;
    wibble /= wibbleDecay;
    for (let y = 0; y < size; y += step) {
      for (let x = 0; x < size; x += step) {
        const mean = (at(y, x) + at(y, x + step) + at(y + step, x) + at(y + step, x + step)) / 4;
        map[(y + half) * size + x + half] = mean + wibble * (2 * random() - 1);
      }
    }
    for (let y = 0; y < size; y += half) {
      for (let x = (y / half) % 2 === 0 ? half : 0; x < size; x += step) {
        const mean = (at(y - half, x) + at(y + half, x) + at(y, x - half) + at(y, x + half)) / 4;
        map[y * size + x] = mean + wibble * (2 * random() - 1);
      }
    }
    step = half;
  }
  let min = Infinity;
  let max = -Infinity;
  for (const v of map) {
    min = Math.min(min, v);
    max = Math.max(max, v);
  }
  return map.map((v) => (v - min) / (max - min || 1));
}

function diskKernel(radius: number, aliasSigma: number): { kernel: Float64Array; r: number } {
  const r = Math.max(1, Math.ceil(radius));
  const size = 2 * r + 1;
  const kernel = new Float64Array(size * size);
  let total = 0;
  for (let y = -r; y <= r; y++) {
    for (let x = -r; x <= r; x++) {
      // anti-aliased disk: 1 inside, falling off over aliasSigma at the rim
      const d = Math.hypot(x, y) - radius;
      const w = d <= 0 ? 1 : Math.exp(-(d * d) / (2 * aliasSigma * aliasSigma));
      kernel[(y + r) * size + x + r] = w;
      total += w;
    }
  }
  for (let i = 0; i < kernel.length; i++) kernel[i] /= total;
  return { kernel, r };
}

function motionKernel(length: number, sigma: number, angle: number): { kernel: Float64Array; r: number } {
  const r = Math.max(1, Math.ceil(length));
  const size = 2 * r + 1;
  const kernel = new Float64Array(size * size);
  let total = 0;
  // a one-sided streak behind the pixel, Gaussian-weighted along its length (as ImageNet-C's wand blur)
  for (let t = 0; t <= length; t += 0.25) {
    const x = Math.cos(angle) * t;
    const y = Math.sin(angle) * t;
    const w = Math.exp(-(t * t) / (2 * sigma * sigma));
    const xi = Math.round(x) + r;
    const yi = Math.round(y) + r;
    kernel[yi * size + xi] += w;
    total += w;
  }
  for (let i = 0; i < kernel.length; i++) kernel[i] /= total;
  return { kernel, r };
}

/** Samples the image zoomed by `factor` about its centre (bilinear, reflecting); axis tables keep it fast. */
function zoomAbout(image: ImageFrame, factor: number): ImageFrame {
  const { width: w, height: h, channels: ch, data } = image;
  const axis = (n: number): { i0: Int32Array; i1: Int32Array; f: Float64Array } => {
    const centre = (n - 1) / 2;
    const i0 = new Int32Array(n);
    const i1 = new Int32Array(n);
    const f = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const source = centre + (i - centre) / factor;
      const floor = Math.floor(source);
      i0[i] = reflectIndex(floor, n);
      i1[i] = reflectIndex(floor + 1, n);
      f[i] = source - floor;
    }
    return { i0, i1, f };
  };
  const xs = axis(w);
  const ys = axis(h);
  const out = blankLike(image);
  for (let y = 0; y < h; y++) {
    const fy = ys.f[y];
    const r0 = ys.i0[y] * w;
    const r1 = ys.i1[y] * w;
    for (let x = 0; x < w; x++) {
      const fx = xs.f[x];
      for (let c = 0; c < ch; c++) {
        const a = data[(r0 + xs.i0[x]) * ch + c];
        const b = data[(r0 + xs.i1[x]) * ch + c];
        const d = data[(r1 + xs.i0[x]) * ch + c];
        const e = data[(r1 + xs.i1[x]) * ch + c];
        out.data[(y * w + x) * ch + c] = (1 - fy) * ((1 - fx) * a + fx * b) + fy * ((1 - fx) * d + fx * e);
      }
    }
  }
  return out;
}

/**
 * JPEG round trip through jpeg-js of several images at once: each image, padded by edge
 * replication to whole 8 x 8 blocks (as jpeg-js pads a single image), becomes a tile of one mosaic
 * that is encoded and decoded once. jpeg-js codes 4:4:4 blocks independently, so every tile decodes
 * to exactly what the image alone would; this only saves jpeg-js's encoder set-up per call (20-30 ms).
 */
export function jpegRoundTripBatch(images: readonly ImageFrame[], quality: number): ImageFrame[] {
  if (images.length === 0) return [];
  const tileW = Math.max(...images.map((im) => Math.ceil(im.width / 8) * 8));
  const tileH = Math.max(...images.map((im) => Math.ceil(im.height / 8) * 8));
  const columns = Math.ceil(Math.sqrt(images.length));
  const rows = Math.ceil(images.length / columns);
  const width = columns * tileW;
  const height = rows * tileH;
  const rgba = new Uint8Array(width * height * 4).fill(255);
  const bytes = images.map(imageToBytes);
  images.forEach((image, t) => {
    const ox = (t % columns) * tileW;
    const oy = Math.floor(t / columns) * tileH;
    const tw = Math.ceil(image.width / 8) * 8;
    const th = Math.ceil(image.height / 8) * 8;
    for (let y = 0; y < th; y++) {
      const sy = Math.min(y, image.height - 1);
      for (let x = 0; x < tw; x++) {
        const sx = Math.min(x, image.width - 1);
        const p = sy * image.width + sx;
        const q = ((oy + y) * width + ox + x) * 4;
        for (let c = 0; c < 3; c++) rgba[q + c] = bytes[t][p * image.channels + (image.channels === 3 ? c : 0)];
      }
    }
  });
  const encoded = encodeJpeg({ data: rgba, width, height }, quality).data;
  const decoded = decodeJpeg(encoded, { useTArray: true, formatAsRGBA: true }).data;
  return images.map((image, t) => {
    const ox = (t % columns) * tileW;
    const oy = Math.floor(t / columns) * tileH;
    const out = blankLike(image);
    for (let y = 0; y < image.height; y++) {
      for (let x = 0; x < image.width; x++) {
        const q = ((oy + y) * width + ox + x) * 4;
        const p = y * image.width + x;
        if (image.channels === 3) for (let c = 0; c < 3; c++) out.data[3 * p + c] = decoded[q + c] / 255;
        else out.data[p] = (decoded[q] + decoded[q + 1] + decoded[q + 2]) / 765;
      }
    }
    return out;
  });
}

function validate(image: ImageFrame, name: CorruptionName, severity: number): void {
  if (!isCorruptionName(name)) throw new KnobError('INVALID_INPUT', `unknown corruption '${String(name)}'`);
  if (!Number.isInteger(severity) || severity < 1 || severity > 5)
    throw new KnobError('INVALID_INPUT', `severity must be 1..5, got ${severity}`);
  if (CORRUPTION_TABLE[name].rgbOnly && image.channels !== 3)
    throw new KnobError('INVALID_INPUT', `${name} needs an RGB image; this one has ${image.channels} channel`);
}

export function applyCorruption(image: ImageFrame, spec: CorruptionSpec): ImageFrame {
  const { name, severity, seed } = spec;
  validate(image, name, severity);
  const [a, b] = parameter(name, severity);
  const random = seededRandom(seed);
  const scale = lengthScale(image);
  switch (name) {
    case 'gaussian_noise':
      return mapPixels(image, (v) => v + a * normalDraw(random));
    case 'shot_noise':
      return mapPixels(image, (v) => poisson(Math.max(0, v) * a, random) / a);
    case 'impulse_noise':
      return mapPixels(image, (v) => {
        const u = random();
        return u < a / 2 ? 0 : u < a ? 1 : v;
      });
    case 'speckle_noise':
      return mapPixels(image, (v) => v + v * a * normalDraw(random));
    case 'gaussian_blur':
      return gaussianBlur(image, a * scale);
    case 'defocus_blur': {
      const { kernel, r } = diskKernel(a * scale, b * scale);
      return convolve(image, kernel, r);
    }
    case 'motion_blur': {
      const { kernel, r } = motionKernel(a * scale, b * scale, 2 * Math.PI * random());
      return convolve(image, kernel, r);
    }
    case 'zoom_blur': {
      const out = Float32Array.from(image.data);
      let count = 1;
      for (let zoom = 1.01; zoom <= a + 1e-9; zoom += 0.01) {
        const zoomed = zoomAbout(image, zoom);
        for (let i = 0; i < out.length; i++) out[i] += zoomed.data[i];
        count++;
      }
      return { ...image, data: out.map((v) => v / count) };
    }
    case 'contrast': {
      let mean = 0;
      for (const v of image.data) mean += v;
      mean /= image.data.length;
      return mapPixels(image, (v) => (v - mean) * a + mean);
    }
    case 'brightness':
      return image.channels === 3 ? mapHsv(image, (h, s, v) => [h, s, v + a]) : mapPixels(image, (v) => v + a);
    case 'saturate':
      return mapHsv(image, (h, s, v) => [h, s * a + b, v]);
    case 'fog': {
      let size = 2;
      while (size < Math.max(image.width, image.height)) size *= 2;
      const fractal = plasmaFractal(size, b, random);
      let max = 0;
      for (const v of image.data) max = Math.max(max, v);
      return mapPixels(image, (v, i) => {
        const p = Math.floor(i / image.channels);
        const x = p % image.width;
        const y = Math.floor(p / image.width);
        return ((v + a * fractal[y * size + x]) * max) / (max + a);
      });
    }
    case 'pixelate': {
      const w = Math.max(1, Math.round(image.width * a));
      const h = Math.max(1, Math.round(image.height * a));
      const small = new Float32Array(w * h * image.channels);
      const counts = new Float32Array(w * h);
      for (let y = 0; y < image.height; y++) {
        for (let x = 0; x < image.width; x++) {
          const sx = Math.min(w - 1, Math.floor((x * w) / image.width));
          const sy = Math.min(h - 1, Math.floor((y * h) / image.height));
          counts[sy * w + sx]++;
          for (let c = 0; c < image.channels; c++)
            small[(sy * w + sx) * image.channels + c] += image.data[(y * image.width + x) * image.channels + c];
        }
      }
      return mapPixels(image, (_v, i) => {
        const c = i % image.channels;
        const p = Math.floor(i / image.channels);
        const sx = Math.min(w - 1, Math.floor(((p % image.width) * w) / image.width));
        const sy = Math.min(h - 1, Math.floor((Math.floor(p / image.width) * h) / image.height));
        return small[(sy * w + sx) * image.channels + c] / counts[sy * w + sx];
      });
    }
    case 'jpeg_compression':
      return jpegRoundTripBatch([image], a)[0];
    case 'elastic_transform': {
      const { width: w, height: h } = image;
      const field = (): ImageFrame => {
        const noise: ImageFrame = { width: w, height: h, channels: 1, data: new Float32Array(w * h) };
        for (let i = 0; i < noise.data.length; i++) noise.data[i] = 2 * random() - 1;
        const smooth = gaussianBlur(noise, b * scale);
        let peak = 0;
        for (const v of smooth.data) peak = Math.max(peak, Math.abs(v));
        return mapPixels(smooth, (v) => (v / (peak || 1)) * a * scale);
      };
      const dx = field();
      const dy = field();
      const out = blankLike(image);
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          const p = y * w + x;
          for (let c = 0; c < image.channels; c++) {
            out.data[p * image.channels + c] = sampleBilinear(
              image,
              reflectIndex(x, w) + dx.data[p],
              y + dy.data[p],
              c,
            );
          }
        }
      }
      return out;
    }
  }
}

/**
 * Many images with one corruption and severity (seed per image): the same bytes as one call per
 * image, with the JPEG round trips batched into one mosaic.
 */
export function corruptBatch(
  images: readonly ImageFrame[],
  name: CorruptionName,
  severity: number,
  seeds: ArrayLike<number>,
): ImageFrame[] {
  if (name === 'jpeg_compression' && images.length > 1) {
    for (const image of images) validate(image, name, severity);
    return jpegRoundTripBatch(images, parameter(name, severity)[0]);
  }
  return images.map((image, i) => applyCorruption(image, { name, severity, seed: seeds[i] }));
}

/** The canonical 8-bit entry point: bytes in, corrupted bytes out. */
export function corruptBytes(
  bytes: ArrayLike<number>,
  width: number,
  height: number,
  channels: 1 | 3,
  spec: CorruptionSpec,
): Uint8Array {
  return imageToBytes(applyCorruption(imageFromBytes(bytes, width, height, channels), spec));
}
