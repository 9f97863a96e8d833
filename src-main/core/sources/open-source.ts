import { extname } from 'node:path';
import type { SourceKind } from '../../../src-shared/api/session-state';
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
import type { ClassMap } from '../../../src-shared/labels/class-names';
import type { ModelDescription } from '../../../src-shared/api/model-options';
import { openVideoSource } from './video-source';
import { hasUserFile } from '../files/user-files';
import { VIDEO_EXTENSIONS } from '../../../src-shared/api/file-kinds';
import type { CallContext } from '../calls/call-context';
import { readClassMapFile } from './class-map-file';

/**
 * One entry point from what a user names to a FrameSource. A source has a kind and, except for the
 * embedded set, a path of that kind:
 *  - embedded: the shipped Fashion-MNIST test set;
 *  - dataset: an IDX images file (labels found beside it), .npz, or a folder with images.npy;
 *  - folder: a folder of images (a CSV manifest, an ImageFolder, or plain PNG/JPEG files);
 *  - video: a video file (decoded by ffmpeg).
 * A path that is not of the requested kind is refused with a typed error naming it. The command
 * line, which takes a bare path, detects the kind first (detectSourceKind).
 */
export const DEFAULT_DATASET_FRAME_RATE_HZ = 30;
export type FileSourceKind = Exclude<SourceKind, 'camera'>;

export interface OpenSourceOptions {
  /** Model input geometry (video is decoded straight to it). */
  target: { width: number; height: number; channels: 1 | 3 };
  /** Declared frame rate for sources without their own timestamps (default 30 Hz). */
  frameRateHz?: number;
  labelNames?: string[] | null;
  /** False when the model's labels were generated rather than read from its metadata. */
  labelsFromMetadata?: boolean;
  /** Source class name -> model label (class-names.ts), for folders whose names are not the model's. */
  classMap?: ClassMap | null;
  /** Progress and cancellation of slow opens (image folders are decoded file by file). */
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

/** What a source needs to know of the model's labels: their names, whether they are its own, a class map. */
export function modelLabelOptions(
  model: Pick<ModelDescription, 'labelNames' | 'labelsSource'>,
  classMap: ClassMap | null,
): Pick<OpenSourceOptions, 'labelNames' | 'labelsFromMetadata' | 'classMap'> {
  return { labelNames: model.labelNames, labelsFromMetadata: model.labelsSource !== 'generated', classMap };
}

function isIdxPath(path: string): boolean {
  const extension = extname(path.replace(/\.gz$/i, '')).toLowerCase();
  return extension === '.idx' || extension === '.idx3' || /-ubyte(\.gz)?$/i.test(path);
}

function isVideoPath(path: string): boolean {
  return VIDEO_EXTENSIONS.includes(extname(path).toLowerCase());
}

/** The kind of source a bare path names (the command line's --source). */
export async function detectSourceKind(spec: string): Promise<FileSourceKind> {
  if (spec === 'default' || spec === 'embedded') return 'embedded';
  if (await isDirectory(spec)) return (await hasUserFile(spec, 'images.npy')) ? 'dataset' : 'folder';
  if (isVideoPath(spec)) return 'video';
  if (extname(spec).toLowerCase() === '.npz' || isIdxPath(spec)) return 'dataset';
  throw new KnobError(
    'INVALID_INPUT',
    `${spec}: unknown source type (expected 'default', a folder, an IDX, .npz or video file: ${VIDEO_EXTENSIONS.join(' ')})`,
  );
}

export async function openSource(
  source: { kind: FileSourceKind; path?: string },
  options: OpenSourceOptions,
): Promise<FrameSource> {
  if (options.classMap && source.kind !== 'folder')
    throw new KnobError(
      'INVALID_INPUT',
      `a class map applies to a folder source (class folders or a manifest), not to a ${source.kind} source`,
    );
  const dataset = {
    frameRateHz: options.frameRateHz ?? DEFAULT_DATASET_FRAME_RATE_HZ,
    labelNames: options.labelNames ?? null,
    labelsFromMetadata: options.labelsFromMetadata,
    classMap: options.classMap ?? null,
    onProgress: options.onProgress,
    signal: options.signal,
  };
  if (source.kind === 'embedded') {
    if (source.path !== undefined) throw new KnobError('BAD_REQUEST', 'the embedded source takes no path');
    const opened = await openIdxSource(EMBEDDED_IMAGES_PATH, EMBEDDED_LABELS_PATH, 'embedded', {
      ...dataset,
      labelNames: FASHION_MNIST_LABELS,
    });
    return {
      ...opened,
      info: {
        ...opened.info,
        path: null,
        description: `embedded Fashion-MNIST test set (${opened.info.frameCount} images)`,
      },
    };
  }
  const path = source.path;
  if (path === undefined) throw new KnobError('BAD_REQUEST', `a ${source.kind} source needs a path`);
  const directory = await isDirectory(path);
  switch (source.kind) {
    case 'dataset':
      if (directory) {
        if (await hasUserFile(path, 'images.npy')) return openNumpySource(path, dataset);
        throw new KnobError(
          'INVALID_INPUT',
          `${path}: not a dataset folder (no images.npy; a folder of images is a 'folder' source)`,
        );
      }
      if (extname(path).toLowerCase() === '.npz') return openNumpySource(path, dataset);
      if (isIdxPath(path)) return openIdxSource(path, idxLabelsPathFor(path), 'dataset', dataset);
      throw new KnobError(
        'INVALID_INPUT',
        `${path}: not a dataset (expected an IDX file, a .npz file or a folder with images.npy)`,
      );
    case 'folder':
      if (!directory) throw new KnobError('INVALID_INPUT', `${path}: not a folder`);
      return openImageFolderSource(path, dataset);
    case 'video':
      if (directory) throw new KnobError('INVALID_INPUT', `${path}: is a folder, not a video file`);
      if (!isVideoPath(path)) {
        throw new KnobError(
          'INVALID_INPUT',
          `${path}: not a video file (expected one of ${VIDEO_EXTENSIONS.join(' ')})`,
        );
      }
      return openVideoSource(path, {
        target: options.target,
        frameRateHz: options.frameRateHz,
        onProgress: options.onProgress,
        signal: options.signal,
      });
  }
}

/** A bare path or 'default', as the command line takes it: its kind detected, then opened as that kind. */
export async function openSourcePath(spec: string, options: OpenSourceOptions): Promise<FrameSource> {
  const kind = await detectSourceKind(spec);
  return openSource(kind === 'embedded' ? { kind } : { kind, path: spec }, options);
}

/**
 * A file source opened for a model, as the desk asks for it (source.open): decoded to the model's
 * input, labels matched to the model's by name (with the class map file, when given), with the
 * call's progress and cancellation.
 */
export async function openSourceFor(
  model: ModelDescription,
  request: { kind: FileSourceKind; path?: string; frameRateHz?: number; classMap?: string },
  call: CallContext,
): Promise<FrameSource> {
  const classMap = request.classMap === undefined ? null : await readClassMapFile(request.classMap);
  return openSource(
    { kind: request.kind, path: request.path },
    {
      target: model.input,
      frameRateHz: request.frameRateHz,
      ...modelLabelOptions(model, classMap),
      signal: call.signal,
      onProgress: (done, total) => call.progress(`opening ${request.path ?? request.kind}`, done, total),
    },
  );
}
