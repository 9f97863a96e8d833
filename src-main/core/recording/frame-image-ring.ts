/**
 * The most recent frames as the model saw them (fitted and corrupted), for scrubbing a recording:
 * a ring of fixed memory that grows by doubling up to its full size, so short streams use little.
 */
export const IMAGE_MEMORY_BYTES = 64 * 1024 * 1024;

export interface FrameImage {
  width: number;
  height: number;
  channels: 1 | 3;
  pixels: Uint8Array;
}

export class FrameImageRing {
  private images = new Uint8Array(0);
  private readonly slots: number;
  private readonly frameBytes: number;
  private newest = -1;

  constructor(
    private readonly geometry: { width: number; height: number; channels: 1 | 3 },
    memoryBytes = IMAGE_MEMORY_BYTES,
  ) {
    this.frameBytes = geometry.width * geometry.height * geometry.channels;
    this.slots = Math.max(1, Math.floor(memoryBytes / this.frameBytes));
  }

  /** Keeps the pixels of frame `frame` (frames arrive in order). */
  keep(frame: number, pixels: Uint8Array): void {
    const size = this.frameBytes;
    const slot = frame % this.slots;
    if (this.images.length < (slot + 1) * size) {
      const next = new Uint8Array(Math.min(this.slots, Math.max(64, 2 * (slot + 1))) * size);
      next.set(this.images);
      this.images = next;
    }
    this.images.set(pixels, slot * size);
    this.newest = frame;
  }

  /** A copy of the frame's pixels while it is still in the ring, else null. */
  image(frame: number): FrameImage | null {
    if (frame < 0 || frame > this.newest || frame <= this.newest - this.slots) return null;
    const slot = frame % this.slots;
    return { ...this.geometry, pixels: this.images.slice(slot * this.frameBytes, (slot + 1) * this.frameBytes) };
  }
}
