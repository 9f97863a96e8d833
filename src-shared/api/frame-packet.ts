import { KnobError } from '../errors';

/**
 * The binary frame path (ARCHITECTURE.md): camera frames, already downscaled in the renderer, travel
 * as one binary message each (a MessagePort in Electron, a binary WebSocket message in browser
 * mode). Layout, little-endian:
 *   0  'KNFR' magic     4  version (1)    5  channels (1 or 3)   6  reserved (2 bytes)
 *   8  width (u32)      12 height (u32)   16 capture time in seconds (f64)
 *   24 label (i32, -1 unknown)           28 reserved (4 bytes)  32 pixels, H x W x C bytes
 */
export const FRAME_PACKET_HEADER_BYTES = 32;
export const FRAME_PACKET_MAX_SIDE = 4096;
const MAGIC = 0x52464e4b; // 'KNFR' read as a little-endian u32

export interface FramePacket {
  width: number;
  height: number;
  channels: 1 | 3;
  timestampSeconds: number;
  label: number;
  pixels: Uint8Array;
}

export function encodeFramePacket(frame: FramePacket): Uint8Array {
  const out = new Uint8Array(FRAME_PACKET_HEADER_BYTES + frame.pixels.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint8(4, 1);
  view.setUint8(5, frame.channels);
  view.setUint32(8, frame.width, true);
  view.setUint32(12, frame.height, true);
  view.setFloat64(16, frame.timestampSeconds, true);
  view.setInt32(24, frame.label, true);
  out.set(frame.pixels, FRAME_PACKET_HEADER_BYTES);
  return out;
}

/** Parses an untrusted packet; a malformed one is a BAD_REQUEST naming what is wrong. */
export function decodeFramePacket(bytes: Uint8Array): FramePacket {
  const fail = (problem: string): never => {
    throw new KnobError('BAD_REQUEST', `frame packet: ${problem}`);
  };
  if (bytes.length < FRAME_PACKET_HEADER_BYTES)
    fail(`${bytes.length} bytes is shorter than the ${FRAME_PACKET_HEADER_BYTES}-byte header`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) fail('bad magic (not a Knob frame)');
  if (view.getUint8(4) !== 1) fail(`version ${view.getUint8(4)} is not supported`);
  const channels = view.getUint8(5);
  if (channels !== 1 && channels !== 3) fail(`${channels} channels (1 or 3 expected)`);
  const width = view.getUint32(8, true);
  const height = view.getUint32(12, true);
  if (width < 1 || height < 1 || width > FRAME_PACKET_MAX_SIDE || height > FRAME_PACKET_MAX_SIDE)
    fail(`size ${width} x ${height} is outside 1..${FRAME_PACKET_MAX_SIDE}`);
  const timestampSeconds = view.getFloat64(16, true);
  if (!Number.isFinite(timestampSeconds)) fail('capture time is not finite');
  const expected = FRAME_PACKET_HEADER_BYTES + width * height * channels;
  if (bytes.length !== expected) fail(`${bytes.length} bytes, ${width} x ${height} x ${channels} needs ${expected}`);
  return {
    width,
    height,
    channels: channels as 1 | 3,
    timestampSeconds,
    label: view.getInt32(24, true),
    pixels: bytes.subarray(FRAME_PACKET_HEADER_BYTES),
  };
}
