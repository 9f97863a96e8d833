import type { InputSpec } from './input-spec';

/**
 * 8-bit frames (count x H x W x C, row-major, already at the spec's size and channels) into the
 * model's float32 tensor, written into `out` (no allocation per frame). Each channel's 256 possible
 * values are computed once, in float64, by the spec's formula
 *   x = (lo + (b / 255) (hi - lo) - mean_c) / std_c
 * and rounded to float32, so the per-value work is one table load.
 */
export interface TensorMap {
  /** lookup[c * 256 + b]: the model value of byte b in channel c. */
  lookup: Float32Array;
}

export function tensorMap(spec: InputSpec): TensorMap {
  const [lo, hi] = spec.value_range;
  const lookup = new Float32Array(spec.channels * 256);
  for (let c = 0; c < spec.channels; c++) {
    const mean = spec.mean[c % spec.mean.length];
    const std = spec.std[c % spec.std.length];
    for (let b = 0; b < 256; b++) lookup[c * 256 + b] = (lo + (b / 255) * (hi - lo) - mean) / std;
  }
  return { lookup };
}

export function framesToTensorInto(
  frames: Uint8Array,
  count: number,
  spec: InputSpec,
  map: TensorMap,
  out: Float32Array,
): void {
  const channels = spec.channels;
  const pixels = spec.width * spec.height;
  const lookup = map.lookup;
  if (channels === 1) {
    const total = count * pixels;
    for (let i = 0; i < total; i++) out[i] = lookup[frames[i]];
    return;
  }
  const planar = spec.layout === 'NCHW';
  if (planar && channels === 3) {
    // the usual colour model written out (three planes, one pass over each pixel's bytes): the
    // general loop below took 0.40 ms a 224 x 224 frame here, this one 0.16 ms
    for (let n = 0; n < count; n++) {
      const base = n * pixels * 3;
      for (let p = 0, at = base; p < pixels; p++, at += 3) {
        out[base + p] = lookup[frames[at]];
        out[base + pixels + p] = lookup[256 + frames[at + 1]];
        out[base + 2 * pixels + p] = lookup[512 + frames[at + 2]];
      }
    }
    return;
  }
  for (let n = 0; n < count; n++) {
    const base = n * pixels * channels;
    for (let p = 0; p < pixels; p++) {
      for (let c = 0; c < channels; c++) {
        const value = lookup[c * 256 + frames[base + p * channels + c]];
        out[planar ? base + c * pixels + p : base + p * channels + c] = value;
      }
    }
  }
}

export function tensorShape(spec: InputSpec, count: number): number[] {
  return spec.layout === 'NCHW'
    ? [count, spec.channels, spec.height, spec.width]
    : [count, spec.height, spec.width, spec.channels];
}
