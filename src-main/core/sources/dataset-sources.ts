import { existsSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { SourceIdentity } from '../../../src-shared/api/source-identity';
import { KnobError } from '../../../src-shared/errors';
import { splitCsvLine } from '../../../src-shared/labels/csv-line';
import { matchClassNames, type ClassMap, type ClassMapping } from '../../../src-shared/labels/class-names';
import { decodeIdxFile, readIdxFile } from '../datasets/idx-file';
import { parseNpy, readNpyFile, readNpzFile, type NpyArray } from '../datasets/npy-file';
import { checkTextField } from '../files/text-fields';
import { hasUserFile, isUserFolder, listUserFolder, readUserFile, userText } from '../files/user-files';
import { decodeImageFile, IMAGE_EXTENSIONS, type DecodedImage } from './image-file';
import { inMemorySource, type FrameSource, type SourceInfo, type SourceKind } from './frame-source';
import {
  fileIdentity,
  folderIdentity,
  hashedFile,
  imagesAndLabelsIdentity,
  readHashedDatasetFile,
  type HashedFile,
} from './source-identity';

/**
 * Labelled and unlabelled image collections: IDX pairs (the embedded Fashion-MNIST test set),
 * NumPy arrays (.npz, or a folder with images.npy and labels.npy), ImageFolder (one subfolder per
 * class, named for it), a CSV manifest (manifest.csv: path and label columns, or path and
 * label_index for class indices) and a plain folder of images (unlabelled). Class names (folders,
 * a manifest's labels) are matched to the model's labels by name (src-shared/labels/class-names.ts),
 * never by order; IDX and NumPy labels are class indices by their format. Timestamps come from the
 * declared frame rate.
 */
export interface DatasetOptions {
  frameRateHz: number;
  /** The model's label names (what class indices mean, and what class names are matched to). */
  labelNames?: string[] | null;
  /** False when the model's labels were generated (no label metadata): names then go in sorted order. */
  labelsFromMetadata?: boolean;
  /** Source name -> model label, for names that are not the model's. */
  classMap?: ClassMap | null;
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
  identity: SourceIdentity,
  classMapping: ClassMapping | null = null,
): SourceInfo {
  return {
    identity,
    classMapping,
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
    // past int32 (an index column of 4294967295) a label would wrap, even to -1 (unlabelled)
    if (!Number.isInteger(label) || label < -1 || label > 0x7fffffff || (classCount !== null && label >= classCount)) {
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
  let labelsFile: HashedFile | null = null;
  if (labelsPath !== null) {
    const read = await readHashedDatasetFile(labelsPath);
    labelsFile = read.file;
    labels = checkLabels(
      decodeIdxFile(read.bytes, labelsPath).data,
      count,
      options.labelNames?.length ?? null,
      labelsPath,
    );
  }
  return inMemorySource(
    info(
      kind,
      imagesPath,
      `IDX ${count} x ${geometry.height} x ${geometry.width}${labels ? ', labelled' : ''}`,
      geometry,
      options.labelNames ?? null,
      options,
      // the embedded set's labels ship with the app beside its images: its images' hash names it
      labelsFile !== null && kind === 'dataset'
        ? await imagesAndLabelsIdentity(imagesPath, labelsFile, options)
        : await fileIdentity(imagesPath, 'dataset', options),
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
  let labelsFile: HashedFile | null = null;
  const isNpz = path.toLowerCase().endsWith('.npz');
  if (isNpz) {
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
    if (await hasUserFile(path, 'labels.npy')) {
      const labelsPath = join(path, 'labels.npy');
      const read = await readHashedDatasetFile(labelsPath);
      labelsFile = read.file;
      labels = parseNpy(read.bytes, labelsPath);
    }
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
      // an archive holds its labels; a folder's labels.npy is a file beside images.npy
      labelsFile === null
        ? await fileIdentity(isNpz ? path : join(path, 'images.npy'), 'dataset', options)
        : await imagesAndLabelsIdentity(join(path, 'images.npy'), labelsFile, options),
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
): Promise<{
  frames: Uint8Array;
  geometry: { width: number; height: number; channels: 1 | 3 };
  hashes: HashedFile[];
}> {
  if (files.length === 0) throw new KnobError('INVALID_INPUT', `${source}: no PNG or JPEG images found`);
  const decoded: DecodedImage[] = [];
  const hashes: HashedFile[] = [];
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
    hashes.push({ path: file, ...image.file });
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
  return { frames, geometry: { width, height, channels }, hashes };
}

const isImage = (name: string): boolean => IMAGE_EXTENSIONS.includes(extname(name).toLowerCase());

interface ManifestRow {
  path: string;
  /** A class name, or (a `label_index` column) a class index as text. */
  label: string;
}

/**
 * Minimal CSV: a header row naming a `path` column and a `label` column (class names) or a
 * `label_index` column (class indices: numbers count as indices only when the column says so);
 * comma-separated, optional double quotes (split as label files are: csv-line.ts).
 */
function parseManifest(text: string, source: string): { rows: ManifestRow[]; byIndex: boolean } {
  const rows = text
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .map((line, i) => splitCsvLine(line, `${source}: row ${i + 1}`));
  const header = rows.shift() ?? [];
  const pathColumn = header.indexOf('path');
  const nameColumn = header.indexOf('label');
  const indexColumn = header.indexOf('label_index');
  if (pathColumn < 0 || nameColumn < 0 === indexColumn < 0)
    throw new KnobError(
      'INVALID_INPUT',
      `${source}: the header must name a 'path' column and one of 'label' (class names) or 'label_index' (class indices) (has ${header.join(', ')})`,
    );
  const labelColumn = nameColumn >= 0 ? nameColumn : indexColumn;
  const parsed = rows.map((row, i) => {
    if (row.length !== header.length)
      throw new KnobError(
        'INVALID_INPUT',
        `${source}: row ${i + 2} has ${row.length} cells, the header ${header.length}`,
      );
    const label = checkTextField(row[labelColumn], source, `row ${i + 2}'s label`);
    if (indexColumn >= 0 && !/^\d+$/u.test(label))
      throw new KnobError('INVALID_INPUT', `${source}: row ${i + 2}'s label_index '${label}' is not a class index`);
    return { path: checkTextField(row[pathColumn], source, `row ${i + 2}'s path`), label };
  });
  return { rows: parsed, byIndex: indexColumn >= 0 };
}

/**
 * The model classes of a source's class names, by name (class-names.ts); with no model labels at
 * all (a bundle check) the names themselves are the classes, in sorted order.
 */
function classMappingFor(names: string[], options: DatasetOptions, where: string): ClassMapping {
  const modelNames = options.labelNames ?? null;
  return matchClassNames(
    names,
    modelNames === null
      ? { names: [...names].sort(), fromMetadata: false }
      : { names: modelNames, fromMetadata: options.labelsFromMetadata ?? true },
    options.classMap ?? null,
    where,
  );
}

function labelledFolder(
  dir: string,
  description: string,
  decoded: Awaited<ReturnType<typeof decodeAll>>,
  identity: SourceIdentity,
  names: string[],
  perFile: string[],
  options: DatasetOptions,
  where: string,
): FrameSource {
  const mapping = classMappingFor(names, options, where);
  const indexOf = new Map(mapping.pairs.map((p) => [p.sourceName, p.modelIndex]));
  const labelNames = options.labelNames ?? [...names].sort();
  return inMemorySource(
    info('folder', dir, description, decoded.geometry, labelNames, options, identity, mapping),
    decoded.frames,
    Int32Array.from(perFile, (name) => indexOf.get(name)!),
  );
}

export async function openImageFolderSource(dir: string, options: DatasetOptions): Promise<FrameSource> {
  const entries = await listUserFolder(dir);
  const manifest = join(dir, 'manifest.csv');
  if (await hasUserFile(dir, 'manifest.csv')) {
    const manifestBytes = await readUserFile(manifest, 'table');
    const { rows, byIndex } = parseManifest(userText(manifestBytes, manifest), manifest);
    const files = rows.map((r) => join(dir, r.path));
    const decoded = await decodeAll(files, dir, options);
    const identity = folderIdentity(dir, [hashedFile(manifest, manifestBytes), ...decoded.hashes]);
    const description = `CSV manifest, ${rows.length} images`;
    if (byIndex) {
      const labelNames = options.labelNames ?? null;
      return inMemorySource(
        info('folder', dir, description, decoded.geometry, labelNames, options, identity),
        decoded.frames,
        checkLabels(
          rows.map((r) => Number(r.label)),
          rows.length,
          labelNames?.length ?? null,
          manifest,
        ),
      );
    }
    const names = [...new Set(rows.map((r) => r.label))];
    const perFile = rows.map((r) => r.label);
    return labelledFolder(dir, description, decoded, identity, names, perFile, options, manifest);
  }
  const classDirs = entries.filter((e) => e.isDirectory());
  if (classDirs.length > 0) {
    const files: string[] = [];
    const perFile: string[] = [];
    const empty: string[] = [];
    for (const classDir of classDirs) {
      const names = (await listUserFolder(join(dir, classDir.name))).map((e) => e.name).filter(isImage);
      if (names.length === 0) empty.push(classDir.name);
      for (const name of names) {
        files.push(join(dir, classDir.name, name));
        perFile.push(classDir.name);
      }
    }
    // by name an empty folder is no class; in sorted order it would silently shift every class after it
    const sortedOrder =
      (options.classMap ?? null) === null &&
      ((options.labelNames ?? null) === null || options.labelsFromMetadata === false);
    if (sortedOrder && empty.length > 0 && files.length > 0) {
      const listed = empty.slice(0, 12).map((e) => `'${e}'`);
      const more = empty.length > listed.length ? `, ... (${empty.length} in all)` : '';
      throw new KnobError(
        'INVALID_INPUT',
        `${dir} (ImageFolder): class folder(s) ${listed.join(', ')}${more} hold no images; with no label metadata the classes go in sorted folder order, and an empty folder would shift every class after it: add its images, remove it, or give a class map`,
      );
    }
    const decoded = await decodeAll(files, dir, options);
    const identity = folderIdentity(dir, decoded.hashes);
    const names = [...new Set(perFile)];
    const description = `ImageFolder, ${files.length} images in ${names.length} classes`;
    return labelledFolder(dir, description, decoded, identity, names, perFile, options, `${dir} (ImageFolder)`);
  }
  const files = entries.filter((e) => e.isFile() && isImage(e.name)).map((e) => join(dir, e.name));
  const decoded = await decodeAll(files, dir, options);
  return inMemorySource(
    info(
      'folder',
      dir,
      `${files.length} images, unlabelled`,
      decoded.geometry,
      options.labelNames ?? null,
      options,
      folderIdentity(dir, decoded.hashes),
    ),
    decoded.frames,
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
