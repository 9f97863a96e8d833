import { KnobError } from '../../../src-shared/errors';

/**
 * How much of each kind of input the app will read, checked before anything is read or allocated.
 * Defaults suit the app's real inputs with room to spare; a user with bigger files raises one with
 * `--input-limit KIND=SIZE` (the CLI) or KNOB_INPUT_LIMITS="KIND=SIZE,..." (every host). Sizes take
 * K, M and G suffixes (powers of 1024).
 *
 *   model          an ONNX file                                   2G
 *   dataset        an IDX, .npy or .npz file                      2G
 *   image          one PNG or JPEG file                           64M
 *   trace          an Arrow trace                                 4G
 *   table          logits, probabilities or labels (.json .csv)   1G
 *   settings       a settings file or a model's sidecar           64M (a calibrator's feature bank or
 *                  isotonic maps fitted on hours of frames; the writer refuses past it)
 *   bundle         a tuned-calibrator bundle (NAME.knob.zip)      2G
 *   video          a video file (decoded as a stream)             64G
 *   decompressed   what one archive or gzip stream may unpack to  2G
 *   entries        files in one archive                           10000
 *   ratio          unpacked / packed size of an entry over 16M    100
 *   pixels         pixels of one decoded image                    40000000
 *   folder         files listed in one image folder               1000000
 *   manifest       a bundle's manifest.json, read before any      8M
 *                  other member is unpacked
 *   text           one text field read from a file (a label, a    4096
 *                  class name, a metadata value, a source), in
 *                  UTF-16 code units: a file of a few megabytes
 *                  must not become a label every report and API
 *                  message repeats
 */
export const INPUT_LIMIT_KINDS = [
  'model',
  'dataset',
  'image',
  'trace',
  'table',
  'settings',
  'bundle',
  'video',
  'decompressed',
  'entries',
  'ratio',
  'pixels',
  'folder',
  'manifest',
  'text',
] as const;
export type InputLimitKind = (typeof INPUT_LIMIT_KINDS)[number];
export type FileKind = Extract<
  InputLimitKind,
  'model' | 'dataset' | 'image' | 'trace' | 'table' | 'settings' | 'bundle' | 'video'
>;

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

export const DEFAULT_INPUT_LIMITS: Readonly<Record<InputLimitKind, number>> = Object.freeze({
  model: 2 * GIB,
  dataset: 2 * GIB,
  image: 64 * MIB,
  trace: 4 * GIB,
  table: GIB,
  settings: 64 * MIB,
  bundle: 2 * GIB,
  video: 64 * GIB,
  decompressed: 2 * GIB,
  entries: 10_000,
  ratio: 100,
  pixels: 40_000_000,
  folder: 1_000_000,
  manifest: 8 * MIB,
  text: 4096,
});

/** Entries at most this big are exempt from the ratio limit (small files of zeros are normal). */
export const RATIO_EXEMPT_BYTES = 16 * MIB;

let limits: Record<InputLimitKind, number> = { ...DEFAULT_INPUT_LIMITS };

export function inputLimit(kind: InputLimitKind): number {
  return limits[kind];
}

/** `4G`, `512M`, `64K`, `100`: a positive size or count. */
export function parseSize(text: string, what: string): number {
  const match = /^(\d+(?:\.\d+)?)([KMG]?)$/i.exec(text.trim());
  const value = match ? Number(match[1]) * 1024 ** ' KMG'.indexOf((match[2] || ' ').toUpperCase()) : Number.NaN;
  if (!(value > 0) || !Number.isFinite(value)) {
    throw new KnobError('BAD_REQUEST', `${what}: '${text}' is not a size (a number with an optional K, M or G)`);
  }
  return Math.floor(value);
}

/** Applies `KIND=SIZE,KIND=SIZE` (the option's and the environment's form) over the current limits. */
export function applyInputLimits(spec: string, what: string): void {
  const next = { ...limits };
  for (const part of spec.split(',').filter((p) => p.trim() !== '')) {
    const [kind, size] = part.split('=');
    if (size === undefined || !(INPUT_LIMIT_KINDS as readonly string[]).includes(kind.trim())) {
      throw new KnobError(
        'BAD_REQUEST',
        `${what}: '${part}' is not KIND=SIZE with KIND one of ${INPUT_LIMIT_KINDS.join(', ')}`,
      );
    }
    next[kind.trim() as InputLimitKind] = parseSize(size, `${what} ${kind.trim()}`);
  }
  limits = next;
}

/** The defaults, then KNOB_INPUT_LIMITS (read once per process, by the hosts and the CLI). */
export function resetInputLimits(environment: string | undefined = process.env.KNOB_INPUT_LIMITS): void {
  limits = { ...DEFAULT_INPUT_LIMITS };
  if (environment !== undefined && environment !== '') applyInputLimits(environment, 'KNOB_INPUT_LIMITS');
}

export function formatBytes(bytes: number): string {
  if (bytes >= GIB) return `${(bytes / GIB).toFixed(bytes % GIB === 0 ? 0 : 1)} GiB`;
  if (bytes >= MIB) return `${(bytes / MIB).toFixed(bytes % MIB === 0 ? 0 : 1)} MiB`;
  return `${bytes} bytes`;
}

resetInputLimits();
