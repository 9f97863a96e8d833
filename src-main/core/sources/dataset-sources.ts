import { existsSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { KnobError } from '../../../src-shared/errors';
import { readIdxFile } from '../datasets/idx-file';
import { readNpyFile, readNpzFile, type NpyArray } from '../datasets/npy-file';
import { checkTextField } from '../files/text-fields';
import { hasUserFile, isUserFolder, listUserFolder, readUserText } from '../files/user-files';
import { decodeImageFile, IMAGE_EXTENSIONS, type DecodedImage } from './image-file';
import { inMemorySource, type FrameSource, type SourceInfo, type SourceKind } from './frame-source';

/**
 * Labelled and unlabelled image collections: IDX pairs (the embedded Fashion-MNIST test set),
 * NumPy arrays (.npz, or a folder with images.npy and labels.npy), ImageFolder (one subfolder per
 * class, class = folder name, sorted), a CSV manifest (manifest.csv: path,label) and a plain folder
 * of images (unlabelled). Timestamps come from the declared frame rate.
 */
export interface DatasetOptions {
  frameRateHz: number;
  /** Label names when the files carry only indices (IDX, NumPy). */
  labelNames?: string[] | null;
  /** Decoding an image folder reports progress per file and stops (CANCELLED) when aborted. */
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

function info(
  kind: SourceKind,
  path: string,
  description: string,
  geometry: { width: number; height: number; channels: 1 | 3 },
  labelNames: string[] | null,
  options: DatasetOptions,
): SourceInfo {
  return {
    kind,
    path,
    description,
    frameCount: null,
    ...geometry,
    labelNames,
    hasLabels: false,
    frameRateHz: options.frameRateHz,
    timestampSource: 'declared-rate',
  };
}

function checkLabels(labels: ArrayLike<number>, count: number, classCount: number | null, source: string): Int32Array {
  if (labels.length !== count)
    throw new KnobError('INVALID_INPUT', `${source}: ${labels.length} labels for ${count} images`);
  const out = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    const label = labels[i];
    if (!Number.isInteger(label) || label < -1 || (classCount !== null && label >= classCount)) {
      throw new KnobError(
        'INVALID_INPUT',
        `${source}: label ${label} of image ${i} is not a class index${classCount === null ? '' : ` below ${classCount}`}`,
      );
    }
    out[i] = label;
  }
  return out;
}

function geometryOf(shape: number[], source: string): { width: number; height: number; channels: 1 | 3 } {
  if (shape.length === 3) return { height: shape[1], width: shape[2], channels: 1 };
  if (shape.length === 4 && (shape[3] === 1 || shape[3] === 3))
    return { height: shape[1], width: shape[2], channels: shape[3] as 1 | 3 };
  throw new KnobError(
    'INVALID_INPUT',
    `${source}: images of shape (${shape.join(', ')}) are not N x H x W or N x H x W x C (C = 1 or 3)`,
  );
}

export async function openIdxSource(
  imagesPath: string,
  labelsPath: string | null,
  kind: SourceKind,
  options: DatasetOptions,
): Promise<FrameSource> {
  const images = await readIdxFile(imagesPath);
  const geometry = geometryOf(images.dimensions, imagesPath);
  const count = images.dimensions[0];
  if (count === 0) throw new KnobError('INVALID_INPUT', `${imagesPath}: the dataset is empty`);
  let labels: Int32Array | null = null;
  if (labelsPath !== null) {
    const raw = await readIdxFile(labelsPath);
    labels = checkLabels(raw.data, count, options.labelNames?.length ?? null, labelsPath);
  }
  return inMemorySource(
    info(
      kind,
      imagesPath,
      `IDX ${count} x ${geometry.height} x ${geometry.width}${labels ? ', labelled' : ''}`,
      geometry,
      options.labelNames ?? null,
      options,
    ),
    images.data,
    labels,
  );
}

/** uint8 pixels as they are; floating pixels in [0, 1] scaled to 0..255. */
function imageBytes(array: NpyArray, source: string): Uint8Array {
  if (array.bytes !== null) return array.bytes;
  if (array.dtype[0] !== 'f')
    throw new KnobError(
      'INVALID_INPUT',
      `${source}: images of dtype ${array.dtype} (uint8, or floats in [0, 1] expected)`,
    );
  const out = new Uint8Array(array.values.length);
  for (let i = 0; i < out.length; i++) {
    const v = array.values[i];
    if (!(v >= 0 && v <= 1))
      throw new KnobError('INVALID_INPUT', `${source}: float pixel ${v} at index ${i} is outside [0, 1]`);
    out[i] = Math.round(v * 255);
  }
  return out;
}

const NPZ_IMAGE_KEYS = ['images', 'x', 'x_test', 'X'];
const NPZ_LABEL_KEYS = ['labels', 'y', 'y_test', 'Y'];

export async function openNumpySource(path: string, options: DatasetOptions): Promise<FrameSource> {
  let images: NpyArray | undefined;
  let labels: NpyArray | undefined;
  if (path.toLowerCase().endsWith('.npz')) {
    const arrays = await readNpzFile(path, 'dataset');
    images = NPZ_IMAGE_KEYS.map((k) => arrays[k]).find((a) => a !== undefined);
    labels = NPZ_LABEL_KEYS.map((k) => arrays[k]).find((a) => a !== undefined);
    if (images === undefined)
      throw new KnobError(
        'INVALID_INPUT',
        `${path}: no image array (named one of ${NPZ_IMAGE_KEYS.join(', ')}; has ${Object.keys(arrays).join(', ')})`,
      );
  } else {
    images = await readNpyFile(join(path, 'images.npy'), 'dataset');
    if (await hasUserFile(path, 'labels.npy')) labels = await readNpyFile(join(path, 'labels.npy'), 'dataset');
  }
  const geometry = geometryOf(images.shape, path);
  const count = images.shape[0];
  if (count === 0) throw new KnobError('INVALID_INPUT', `${path}: the dataset is empty`);
  const labelArray =
    labels === undefined ? null : checkLabels(labels.values, count, options.labelNames?.length ?? null, path);
  return inMemorySource(
    info(
      'dataset',
      path,
      `NumPy ${count} x ${geometry.height} x ${geometry.width} x ${geometry.channels}`,
      geometry,
      options.labelNames ?? null,
      options,
    ),
    imageBytes(images, path),
    labelArray,
  );
}

/** Decodes every file into one block; all images must share the first one's size and channels. */
async function decodeAll(
  files: string[],
  source: string,
  options: DatasetOptions,
): Promise<{ frames: Uint8Array; geometry: { width: number; height: number; channels: 1 | 3 } }> {
  if (files.length === 0) throw new KnobError('INVALID_INPUT', `${source}: no PNG or JPEG images found`);
  const decoded: DecodedImage[] = [];
  for (const [index, file] of files.entries()) {
    if (options.signal?.aborted)
      throw new KnobError('CANCELLED', `${source}: opening cancelled after ${index} of ${files.length} images`);
    options.onProgress?.(index, files.length);
    const image = await decodeImageFile(file);
    const firstImage = decoded[0] ?? image;
    if (image.width !== firstImage.width || image.height !== firstImage.height) {
      throw new KnobError(
        'INVALID_INPUT',
        `${file}: image is ${image.width} x ${image.height}, the folder's images are ${firstImage.width} x ${firstImage.height}`,
      );
    }
    decoded.push(image);
  }
  const channels: 1 | 3 = decoded.some((d) => d.channels === 3) ? 3 : 1;
  const { width, height } = decoded[0];
  const frameBytes = width * height * channels;
  const frames = new Uint8Array(decoded.length * frameBytes);
  decoded.forEach((image, i) => {
    if (image.channels === channels) frames.set(image.data, i * frameBytes);
    else
      for (let p = 0; p < width * height; p++)
        frames.fill(image.data[p], i * frameBytes + p * 3, i * frameBytes + p * 3 + 3);
  });
  return { frames, geometry: { width, height, channels } };
}

const isImage = (name: string): boolean => IMAGE_EXTENSIONS.includes(extname(name).toLowerCase());

/** Minimal CSV: header row with path and label columns, comma-separated, optional double quotes. */
function parseManifest(text: string, source: string): Array<{ path: string; label: string }> {
  const rows = text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .map((line) => line.split(',').map((cell) => cell.trim().replace(/^"(.*)"$/, '$1')));
  const header = rows.shift() ?? [];
  const pathColumn = header.indexOf('path');
  const labelColumn = header.indexOf('label');
  if (pathColumn < 0 || labelColumn < 0)
    throw new KnobError(
      'INVALID_INPUT',
      `${source}: the header must name 'path' and 'label' columns (has ${header.join(', ')})`,
    );
  return rows.map((row, i) => {
    if (row.length !== header.length)
      throw new KnobError(
        'INVALID_INPUT',
        `${source}: row ${i + 2} has ${row.length} cells, the header ${header.length}`,
      );
    return {
      path: checkTextField(row[pathColumn], source, `row ${i + 2}'s path`),
      label: checkTextField(row[labelColumn], source, `row ${i + 2}'s label`),
    };
  });
}

export async function openImageFolderSource(dir: string, options: DatasetOptions): Promise<FrameSource> {
  const entries = await listUserFolder(dir);
  const manifest = join(dir, 'manifest.csv');
  if (await hasUserFile(dir, 'manifest.csv')) {
    const rows = parseManifest(await readUserText(manifest, 'table'), manifest);
    const names = [...new Set(rows.map((r) => r.label))].sort();
    const numeric = rows.every((r) => /^\d+$/.test(r.label));
    const labelNames = numeric ? (options.labelNames ?? null) : names;
    const labels = Int32Array.from(rows, (r) => (numeric ? Number(r.label) : names.indexOf(r.label)));
    const { frames, geometry } = await decodeAll(
      rows.map((r) => join(dir, r.path)),
      dir,
      options,
    );
    return inMemorySource(
      info('folder', dir, `CSV manifest, ${rows.length} images`, geometry, labelNames, options),
      frames,
      checkLabels(labels, rows.length, labelNames?.length ?? null, manifest),
    );
  }
  const classDirs = entries.filter((e) => e.isDirectory());
  if (classDirs.length > 0) {
    const files: string[] = [];
    const labels: number[] = [];
    for (const [index, classDir] of classDirs.entries()) {
      const names = (await listUserFolder(join(dir, classDir.name))).map((e) => e.name).filter(isImage);
      for (const name of names) {
        files.push(join(dir, classDir.name, name));
        labels.push(index);
      }
    }
    const { frames, geometry } = await decodeAll(files, dir, options);
    const labelNames = classDirs.map((d) => d.name);
    return inMemorySource(
      info(
        'folder',
        dir,
        `ImageFolder, ${files.length} images in ${labelNames.length} classes`,
        geometry,
        labelNames,
        options,
      ),
      frames,
      Int32Array.from(labels),
    );
  }
  const files = entries.filter((e) => e.isFile() && isImage(e.name)).map((e) => join(dir, e.name));
  const { frames, geometry } = await decodeAll(files, dir, options);
  return inMemorySource(
    info('folder', dir, `${files.length} images, unlabelled`, geometry, options.labelNames ?? null, options),
    frames,
    null,
  );
}

/** Whether a path names a real folder (for the source dispatcher); a path that does not exist is an error. */
export async function isDirectory(path: string): Promise<boolean> {
  if (await isUserFolder(path)) return true;
  try {
    await lstat(path);
  } catch {
    throw new KnobError('INVALID_INPUT', `${path}: does not exist`);
  }
  return false;
}

export function idxLabelsPathFor(imagesPath: string): string | null {
  const candidate = join(
    imagesPath,
    '..',
    basename(imagesPath).replace('images', 'labels').replace('-idx3-', '-idx1-'),
  );
  return candidate !== imagesPath && existsSync(candidate) ? candidate : null;
}
