import {
  corruptBatch,
  corruptionAt,
  corruptBytes,
  imageFromBytes,
  imageToBytes,
  type CorruptionSchedule,
} from '../corruptions';
import type { BatchMetadata } from '../trace/trace-builder';
import { fitterFor, type FrameFitter, type FrameGeometry } from './fit-frame';

/**
 * A batch of source frames made ready for the model: each frame is fitted to the model's input
 * size and channels, then corrupted as the schedule says for its stream index (the model, the
 * trace and the UI all see the corrupted frame). The per-frame corruption, severities, seed and
 * source index go into `metadata`. Corruptions are defined on model-sized frames, so a camera frame
 * and a Fashion-MNIST image at the same severity are degraded alike. A batch's JPEG frames are
 * compressed together, one round trip a severity (`corruptBatch`: the same bytes as one a frame),
 * since jpeg-js spends about 20-30 ms setting up each encoder (measured here), a hundred times a small frame's coding.
 */
export interface FramePreparer {
  readonly target: FrameGeometry & { channels: 1 | 3 };
  /** Writes `count` prepared frames into `out` (count x target bytes) and their metadata. */
  prepare(
    frames: Uint8Array,
    from: FrameGeometry,
    count: number,
    firstStreamIndex: number,
    firstSourceFrame: number,
    out: Uint8Array,
    metadata: BatchMetadata,
    metadataOffset?: number,
  ): void;
}

/**
 * The most frames in one JPEG mosaic: 64 frames of 224 x 224 make a 1,792 x 1,792 image, far
 * inside jpeg-js's decoding limits (100 megapixels, 512 MB) whatever the batch.
 */
const JPEG_TILES = 64;

export function createFramePreparer(
  target: FrameGeometry & { channels: 1 | 3 },
  schedule: CorruptionSchedule,
  streamSeed: number,
): FramePreparer {
  const frameBytes = target.width * target.height * target.channels;
  let fitter: FrameFitter | null = null;
  // the byte offsets in `out` of this batch's JPEG frames, by severity
  const jpegFramesBySeverity = new Map<number, number[]>();
  return {
    target,
    prepare(frames, from, count, firstStreamIndex, firstSourceFrame, out, metadata, metadataOffset = 0) {
      const sourceBytes = from.width * from.height * from.channels;
      fitter = fitterFor(fitter, from, target);
      // this batch's alone, even after a batch that failed part-way
      jpegFramesBySeverity.clear();
      for (let i = 0; i < count; i++) {
        const at = i * frameBytes;
        fitter.fitInto(frames.subarray(i * sourceBytes, (i + 1) * sourceBytes), out, at);
        const streamIndex = firstStreamIndex + i;
        const m = metadataOffset + i;
        if (schedule.kind === 'none') {
          metadata.corruption[m] = null;
          metadata.severity[m] = 0;
          metadata.continuousSeverity[m] = 0;
          metadata.corruptionSeed[m] = 0;
        } else {
          const frame = corruptionAt(schedule, streamIndex, streamSeed);
          if (frame.corruption === 'jpeg_compression') {
            const group = jpegFramesBySeverity.get(frame.severity);
            if (group === undefined) jpegFramesBySeverity.set(frame.severity, [at]);
            else group.push(at);
          } else if (frame.corruption !== null) {
            const corrupted = corruptBytes(
              out.subarray(at, at + frameBytes),
              target.width,
              target.height,
              target.channels,
              {
                name: frame.corruption,
                severity: frame.severity,
                seed: frame.seed,
              },
            );
            out.set(corrupted, at);
          }
          metadata.corruption[m] = frame.corruption;
          metadata.severity[m] = frame.severity;
          metadata.continuousSeverity[m] = frame.continuousSeverity;
          metadata.corruptionSeed[m] = frame.seed;
        }
        metadata.sourceFrame[m] = firstSourceFrame + i;
      }
      for (const [severity, offsets] of jpegFramesBySeverity)
        for (let first = 0; first < offsets.length; first += JPEG_TILES) {
          const chunk = offsets.slice(first, first + JPEG_TILES);
          const images = chunk.map((at) =>
            imageFromBytes(out.subarray(at, at + frameBytes), target.width, target.height, target.channels),
          );
          // JPEG draws no random numbers: the seeds are unused
          corruptBatch(images, 'jpeg_compression', severity, new Uint32Array(images.length)).forEach((image, j) =>
            out.set(imageToBytes(image), chunk[j]),
          );
        }
    },
  };
}
