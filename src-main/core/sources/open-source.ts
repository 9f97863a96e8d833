import { extname } from 'node:path';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { KnobError } from '../../../src-shared/errors';
import { EMBEDDED_IMAGES_PATH, EMBEDDED_LABELS_PATH, FASHION_MNIST_LABELS } from '../datasets/embedded-dataset';
import {
  idxLabelsPathFor,
  isDirectory,
  openIdxSource,
  openImageFolderSource,
  openNumpySource,
} from './dataset-sources';
import type { FrameSource } from './frame-source';
import { openVideoSource } from './video-source';

/**
 * One entry point from a source spec to a FrameSource: `default` (the embedded Fashion-MNIST test
 * set), an IDX images file (labels found beside it), .npz, a video file, or a folder (NumPy arrays,
 * CSV manifest, ImageFolder or plain images, in that order of detection).
 */
export const VIDEO_EXTENSIONS = ['.mp4', '.m4v', '.mkv', '.webm', '.avi', '.mov', '.y4m', '.mpg', '.mpeg', '.ogv'];
export const DEFAULT_DATASET_FRAME_RATE_HZ = 30;

export interface OpenSourceOptions {
  /** Model input geometry (video is decoded straight to it). */
  target: { width: number; height: number; channels: 1 | 3 };
  /** Declared frame rate for sources without their own timestamps (default 30 Hz). */
  frameRateHz?: number;
  labelNames?: string[] | null;
  /** Progress and cancellation of slow opens (image folders are decoded file by file). */
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

export async function openSource(spec: string, options: OpenSourceOptions): Promise<FrameSource> {
  const dataset = {
    frameRateHz: options.frameRateHz ?? DEFAULT_DATASET_FRAME_RATE_HZ,
    labelNames: options.labelNames ?? null,
    onProgress: options.onProgress,
    signal: options.signal,
  };
  if (spec === 'default' || spec === 'embedded') {
    const source = await openIdxSource(EMBEDDED_IMAGES_PATH, EMBEDDED_LABELS_PATH, 'embedded', {
      ...dataset,
      labelNames: FASHION_MNIST_LABELS,
    });
    return {
      ...source,
      info: { ...source.info, description: `embedded Fashion-MNIST test set (${source.info.frameCount} images)` },
    };
  }
  const extension = extname(spec.replace(/\.gz$/i, '')).toLowerCase();
  if (await isDirectory(spec)) {
    if (existsSync(join(spec, 'images.npy'))) return openNumpySource(spec, dataset);
    return openImageFolderSource(spec, dataset);
  }
  if (VIDEO_EXTENSIONS.includes(extension))
    return openVideoSource(spec, { target: options.target, frameRateHz: options.frameRateHz });
  if (extension === '.npz') return openNumpySource(spec, dataset);
  if (extension === '.idx' || /-ubyte(\.gz)?$/i.test(spec) || extension === '.idx3')
    return openIdxSource(spec, idxLabelsPathFor(spec), 'dataset', dataset);
  throw new KnobError(
    'INVALID_INPUT',
    `${spec}: unknown source type (expected 'default', a folder, an IDX, .npz or video file: ${VIDEO_EXTENSIONS.join(' ')})`,
  );
}
