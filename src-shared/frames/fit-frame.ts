import { KnobError } from '../errors';

/**
 * Brings one 8-bit frame of any size and channel count to the model's input size and channels.
 * Resampling is an exact box (area) filter: each output pixel is the coverage-weighted mean of the
 * source pixels under it, so downscaling a camera frame averages instead of aliasing; upscaling
 * reduces to nearest neighbour with blended borders. Colour to grey uses Rec. 601 luma
 * (0.299 R + 0.587 G + 0.114 B); grey to colour replicates the value. Rounded to nearest.
 */
export interface FrameGeometry {
  width: number;
  height: number;
  channels: number;
}

export function fitFrameInto(
  source: Uint8Array,
  from: FrameGeometry,
  to: FrameGeometry,
  out: Uint8Array,
  outOffset: number,
  scratch: Float64Array,
): void {
  const { width: sw, height: sh, channels: sc } = from;
  const { width: tw, height: th, channels: tc } = to;
  if (sc !== 1 && sc !== 3 && sc !== 4)
    throw new KnobError('INVALID_INPUT', `a frame with ${sc} channels cannot be used (1, 3 or 4 expected)`);
  if (source.length < sw * sh * sc)
    throw new KnobError(
      'INVALID_INPUT',
      `frame holds ${source.length} bytes, ${sw} x ${sh} x ${sc} needs ${sw * sh * sc}`,
    );
  if (sw === tw && sh === th && sc === tc) {
    out.set(source.subarray(0, sw * sh * sc), outOffset);
    return;
  }
  // Grey (or the colour channels) at the source size, in float64, before the box filter.
  const planes = tc === 1 ? 1 : 3;
  const grey = scratch.length >= sw * sh * planes ? scratch : new Float64Array(sw * sh * planes);
  for (let p = 0; p < sw * sh; p++) {
    const at = p * sc;
    if (planes === 1)
      grey[p] = sc === 1 ? source[at] : 0.299 * source[at] + 0.587 * source[at + 1] + 0.114 * source[at + 2];
    else for (let c = 0; c < 3; c++) grey[p * 3 + c] = sc === 1 ? source[at] : source[at + c];
  }
  const xScale = sw / tw;
  const yScale = sh / th;
  for (let y = 0; y < th; y++) {
    const y0 = y * yScale;
    const y1 = y0 + yScale;
    for (let x = 0; x < tw; x++) {
      const x0 = x * xScale;
      const x1 = x0 + xScale;
      for (let c = 0; c < planes; c++) {
        let sum = 0;
        for (let sy = Math.floor(y0); sy < Math.min(sh, Math.ceil(y1)); sy++) {
          const wy = Math.min(y1, sy + 1) - Math.max(y0, sy);
          for (let sx = Math.floor(x0); sx < Math.min(sw, Math.ceil(x1)); sx++) {
            const wx = Math.min(x1, sx + 1) - Math.max(x0, sx);
            sum += wx * wy * grey[(sy * sw + sx) * planes + c];
          }
        }
        const value = Math.min(255, Math.max(0, Math.round(sum / (xScale * yScale))));
        if (planes === 1) for (let oc = 0; oc < tc; oc++) out[outOffset + (y * tw + x) * tc + oc] = value;
        else out[outOffset + (y * tw + x) * tc + c] = value;
      }
    }
  }
}
