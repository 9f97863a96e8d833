/// <reference lib="webworker" />
import { encodeFramePacket } from '../../src-shared/api/frame-packet';
import { fitterFor, type FrameFitter } from '../../src-shared/frames/fit-frame';

/**
 * Camera frames downscaled to the model's input off the UI thread (ARCHITECTURE.md, frames path):
 * the captured ImageBitmap is read back as RGBA, fitted to the model's size and channels with the
 * same box filter the backend uses (src-shared/frames), and encoded as one binary frame packet,
 * transferred back to the page for sending.
 */
export interface DownscaleRequest {
  bitmap: ImageBitmap;
  width: number;
  height: number;
  channels: 1 | 3;
  timestampSeconds: number;
}

let canvas: OffscreenCanvas | null = null;
let fitter: FrameFitter | null = null;

self.onmessage = (event: MessageEvent<DownscaleRequest>) => {
  const { bitmap, width, height, channels, timestampSeconds } = event.data;
  if (canvas === null || canvas.width !== bitmap.width || canvas.height !== bitmap.height)
    canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const context = canvas.getContext('2d', { willReadFrequently: true })!;
  context.drawImage(bitmap, 0, 0);
  bitmap.close();
  const rgba = context.getImageData(0, 0, canvas.width, canvas.height).data;
  const pixels = new Uint8Array(width * height * channels);
  fitter = fitterFor(fitter, { width: canvas.width, height: canvas.height, channels: 4 }, { width, height, channels });
  fitter.fitInto(new Uint8Array(rgba.buffer, rgba.byteOffset, rgba.byteLength), pixels, 0);
  const packet = encodeFramePacket({ width, height, channels, timestampSeconds, label: -1, pixels });
  (self as unknown as Worker).postMessage(packet, [packet.buffer]);
};
