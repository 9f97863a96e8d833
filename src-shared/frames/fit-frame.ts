import { KnobError } from '../errors';

/**
 * Brings one 8-bit frame of any size and channel count to the model's input size and channels.
 * Resampling is an exact box (area) filter: each output pixel is the coverage-weighted mean of the
 * source pixels under it, so downscaling a camera frame averages instead of aliasing; upscaling
 * reduces to nearest neighbour with blended borders. Colour to grey uses Rec. 601 luma
 * (0.299 R + 0.587 G + 0.114 B); grey to colour replicates the value. Rounded to nearest.
 *
 * The box filter is separable (the weight of a source pixel is its horizontal coverage times its
 * vertical coverage), so it runs as a pass along the rows and then one down the columns, with the
 * coverages of each axis computed once per geometry: O(source + target) work a frame instead of
 * O(target x taps^2), which is what lets a 640 x 480 camera frame be fitted in a few milliseconds.
 * The sums are the same sums taken in another order; they can differ from a one-pass sum by a few
 * units in the last place, which moves a rounded value only at an exact tie.
 */
export interface FrameGeometry {
  width: number;
  height: number;
  channels: number;
}

/** One axis of the box filter: output i covers source [first[i], first[i] + count[i]) with `weights`. */
interface AxisCoverage {
  first: Int32Array;
  count: Int32Array;
  /** Output i's weights start at offset[i]. */
  offset: Int32Array;
  weights: Float64Array;
}

function axisCoverage(sourceLength: number, targetLength: number): AxisCoverage {
  const scale = sourceLength / targetLength;
  const first = new Int32Array(targetLength);
  const count = new Int32Array(targetLength);
  const offset = new Int32Array(targetLength);
  let total = 0;
  for (let i = 0; i < targetLength; i++) {
    const from = Math.floor(i * scale);
    const to = Math.min(sourceLength, Math.ceil(i * scale + scale));
    first[i] = from;
    count[i] = to - from;
    offset[i] = total;
    total += to - from;
  }
  const weights = new Float64Array(total);
  for (let i = 0; i < targetLength; i++) {
    const lo = i * scale;
    const hi = lo + scale;
    for (let k = 0; k < count[i]; k++) {
      const s = first[i] + k;
      weights[offset[i] + k] = Math.min(hi, s + 1) - Math.max(lo, s);
    }
  }
  return { first, count, offset, weights };
}

/** Fits frames of one geometry to another, holding its coverages and working buffers. */
export interface FrameFitter {
  readonly from: FrameGeometry;
  readonly to: FrameGeometry;
  /** Writes the fitted frame at `out[outOffset]`; allocates nothing. */
  fitInto(source: Uint8Array, out: Uint8Array, outOffset: number): void;
}

function checkChannels(channels: number): void {
  if (channels !== 1 && channels !== 3 && channels !== 4)
    throw new KnobError('INVALID_INPUT', `a frame with ${channels} channels cannot be used (1, 3 or 4 expected)`);
}

export function frameFitter(from: FrameGeometry, to: FrameGeometry): FrameFitter {
  const { width: sw, height: sh, channels: sc } = from;
  const { width: tw, height: th, channels: tc } = to;
  checkChannels(sc);
  const identical = sw === tw && sh === th && sc === tc;
  // The planes filtered: one (grey, or a grey source to be replicated) or the three colours.
  const planes = tc === 1 || sc === 1 ? 1 : 3;
  const lumaFromColour = tc === 1 && sc !== 1;
  const columns = identical ? null : axisCoverage(sw, tw);
  const rows = identical ? null : axisCoverage(sh, th);
  const luma = lumaFromColour && !identical ? new Float64Array(sw * sh) : null;
  const alongRows = identical ? new Float64Array(0) : new Float64Array(sh * tw * planes);
  const column = identical ? new Float64Array(0) : new Float64Array(tw * planes);
  const area = (sw / tw) * (sh / th);
  const sourceBytes = sw * sh * sc;

  return {
    from,
    to,
    fitInto(source, out, outOffset) {
      if (source.length < sourceBytes)
        throw new KnobError(
          'INVALID_INPUT',
          `frame holds ${source.length} bytes, ${sw} x ${sh} x ${sc} needs ${sourceBytes}`,
        );
      if (columns === null || rows === null) {
        out.set(source.subarray(0, sourceBytes), outOffset);
        return;
      }
      if (luma !== null)
        for (let p = 0, at = 0; p < sw * sh; p++, at += sc)
          luma[p] = 0.299 * source[at] + 0.587 * source[at + 1] + 0.114 * source[at + 2];
      // Pass 1, along each source row: the horizontal box sums at the target's width.
      const { first: cFirst, count: cCount, offset: cOffset, weights: cWeights } = columns;
      for (let sy = 0; sy < sh; sy++) {
        const rowBase = sy * sw;
        const outBase = sy * tw * planes;
        for (let x = 0; x < tw; x++) {
          const w0 = cOffset[x];
          const s0 = cFirst[x];
          const n = cCount[x];
          const w = outBase + x * planes;
          if (planes === 3) {
            let r = 0;
            let g = 0;
            let b = 0;
            for (let k = 0, at = (rowBase + s0) * sc; k < n; k++, at += sc) {
              const weight = cWeights[w0 + k];
              r += weight * source[at];
              g += weight * source[at + 1];
              b += weight * source[at + 2];
            }
            alongRows[w] = r;
            alongRows[w + 1] = g;
            alongRows[w + 2] = b;
          } else {
            let sum = 0;
            if (luma !== null) for (let k = 0; k < n; k++) sum += cWeights[w0 + k] * luma[rowBase + s0 + k];
            else for (let k = 0; k < n; k++) sum += cWeights[w0 + k] * source[rowBase + s0 + k];
            alongRows[w] = sum;
          }
        }
      }
      // Pass 2, down the columns: the vertical box sums of pass 1, normalised by the box's area.
      const { first: rFirst, count: rCount, offset: rOffset, weights: rWeights } = rows;
      const rowValues = tw * planes;
      for (let y = 0; y < th; y++) {
        column.fill(0);
        for (let k = 0; k < rCount[y]; k++) {
          const wy = rWeights[rOffset[y] + k];
          const base = (rFirst[y] + k) * rowValues;
          for (let i = 0; i < rowValues; i++) column[i] += wy * alongRows[base + i];
        }
        const outRow = outOffset + y * tw * tc;
        for (let x = 0; x < tw; x++)
          for (let c = 0; c < planes; c++) {
            const value = Math.min(255, Math.max(0, Math.round(column[x * planes + c] / area)));
            if (planes === 1) for (let oc = 0; oc < tc; oc++) out[outRow + x * tc + oc] = value;
            else out[outRow + x * tc + c] = value;
          }
      }
    },
  };
}

/** One frame fitted with a fitter made for it (callers with many frames keep a FrameFitter). */
export function fitFrameInto(
  source: Uint8Array,
  from: FrameGeometry,
  to: FrameGeometry,
  out: Uint8Array,
  outOffset: number,
): void {
  frameFitter(from, to).fitInto(source, out, outOffset);
}

/** The fitter for `from`, reusing `previous` when it was made for the same geometries. */
export function fitterFor(previous: FrameFitter | null, from: FrameGeometry, to: FrameGeometry): FrameFitter {
  const same = (a: FrameGeometry, b: FrameGeometry) =>
    a.width === b.width && a.height === b.height && a.channels === b.channels;
  return previous !== null && same(previous.from, from) && same(previous.to, to) ? previous : frameFitter(from, to);
}
