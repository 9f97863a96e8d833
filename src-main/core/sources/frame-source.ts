import type { SourceInfo } from '../../../src-shared/api/session-state';
import { KnobError } from '../../../src-shared/errors';

/**
 * A stream of 8-bit frames with timestamps and (optionally) labels: what the engine consumes.
 * Frames are row-major H x W x C at the source's own geometry; the engine fits them to the model.
 */
export type { SourceInfo, SourceKind } from '../../../src-shared/api/session-state';

export interface FrameBatch {
  first: number;
  count: number;
  frames: Uint8Array;
  /** -1 where a frame has no label; null when the source has none. */
  labels: Int32Array | null;
  timestampsSeconds: Float64Array;
}

export interface FrameSource {
  info: SourceInfo;
  /** Frames from `fromFrame` on (default 0), in batches of at most maxCount. */
  batches(maxCount: number, fromFrame?: number): AsyncGenerator<FrameBatch>;
}

/** Batches over frames already in memory (datasets, image folders), timestamps i / frameRate. */
export function inMemorySource(info: SourceInfo, frames: Uint8Array, labels: Int32Array | null): FrameSource {
  const frameBytes = info.width * info.height * info.channels;
  const total = frames.length / frameBytes;
  if (!Number.isInteger(total) || total === 0)
    throw new KnobError(
      'INVALID_INPUT',
      `${info.path ?? info.kind}: no complete frames (${frames.length} bytes, ${frameBytes} per frame)`,
    );
  return {
    info: { ...info, frameCount: total, hasLabels: labels !== null },
    async *batches(maxCount, fromFrame = 0) {
      for (let first = Math.max(0, fromFrame); first < total; first += maxCount) {
        const count = Math.min(maxCount, total - first);
        const timestampsSeconds = new Float64Array(count);
        for (let i = 0; i < count; i++) timestampsSeconds[i] = (first + i) / info.frameRateHz;
        yield {
          first,
          count,
          frames: frames.subarray(first * frameBytes, (first + count) * frameBytes),
          labels: labels === null ? null : labels.subarray(first, first + count),
          timestampsSeconds,
        };
      }
    },
  };
}
