import { corruptionAt, corruptBytes, type CorruptionSchedule } from '../corruptions';
import type { BatchMetadata } from '../trace/trace-builder';
import { fitterFor, type FrameFitter, type FrameGeometry } from './fit-frame';

/**
 * A batch of source frames made ready for the model: each frame is fitted to the model's input
 * size and channels, then corrupted as the schedule says for its stream index (the model, the
 * trace and the UI all see the corrupted frame). The per-frame corruption, severities, seed and
 * source index go into `metadata`. Corruptions are defined on model-sized frames, so a camera frame
 * and a Fashion-MNIST image at the same severity are degraded alike.
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

export function createFramePreparer(
  target: FrameGeometry & { channels: 1 | 3 },
  schedule: CorruptionSchedule,
  streamSeed: number,
): FramePreparer {
  const frameBytes = target.width * target.height * target.channels;
  let fitter: FrameFitter | null = null;
  return {
    target,
    prepare(frames, from, count, firstStreamIndex, firstSourceFrame, out, metadata, metadataOffset = 0) {
      const sourceBytes = from.width * from.height * from.channels;
      fitter = fitterFor(fitter, from, target);
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
          if (frame.corruption !== null) {
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
    },
  };
}
