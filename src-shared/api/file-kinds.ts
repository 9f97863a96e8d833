/**
 * What a file the operator hands the app is, from its name alone (the page never sees file
 * contents before it asks the backend): how the desk opens a file dropped on the window, passed to
 * the app on its command line, opened from the OS, or chosen in a native dialog. One list of
 * extensions per kind, shared with the dialogs' filters and the backend's source detection.
 */
export const VIDEO_EXTENSIONS = ['.mp4', '.m4v', '.mkv', '.webm', '.avi', '.mov', '.y4m', '.mpg', '.mpeg', '.ogv'];

/** A bundle is written as NAME.knob.zip; NAME names it (and its Triton model). */
export const BUNDLE_EXTENSION = '.knob.zip';
/** Why a bundle path is refused, in the API's contract and the command line alike. */
export const BUNDLE_PATH_RULE = `a bundle is written as a file named NAME${BUNDLE_EXTENSION} (not a folder)`;

export const FILE_KIND_EXTENSIONS = {
  model: ['.onnx'],
  /** A tuned-calibrator bundle (NAME.knob.zip) or a settings file: imported. */
  bundle: ['.zip', '.json'],
  trace: ['.arrow', '.feather'],
  video: VIDEO_EXTENSIONS,
  /** IDX image files (gzipped or not) and .npz arrays; their labels are found beside or inside them. */
  dataset: ['.gz', '.idx', '.idx3', '.npz'],
} as const;

/**
 * A kind above, or 'folder' (no known extension): a folder of images, an ImageFolder, a CSV
 * manifest's folder, or a NumPy folder (images.npy and labels.npy), which only the backend can tell
 * apart (the desk tries it as an image folder, then as a dataset).
 */
export type FileKind = keyof typeof FILE_KIND_EXTENSIONS | 'folder';

export function fileKindOf(path: string): FileKind {
  const name = path
    .replace(/[/\\]+$/, '')
    .split(/[/\\]/)
    .pop()!
    .toLowerCase();
  for (const [kind, extensions] of Object.entries(FILE_KIND_EXTENSIONS) as Array<[FileKind, readonly string[]]>)
    if (extensions.some((extension) => name.endsWith(extension))) return kind;
  return 'folder';
}
