import { KnobError } from '../errors';
import { splitCsvLine } from './csv-line';
import { parseJsonText } from '../json-text';
import { matchClassNames, type ClassMap, type ClassMapping } from './class-names';

/**
 * Per-frame labels imported for a recording that has none (a video, an unlabelled folder) from a
 * CSV or JSON file (issue 27, item 2). Parsing checks the file on its own; resolving checks it
 * against the recording and the model's labels and gives one class per labelled frame.
 *
 * CSV: a header row is required; cells are comma-separated, optionally in double quotes (`""` is a
 * quote inside a quoted cell; a quoted cell ends on its line); lines whose first non-blank
 * character is `#` are comments and blank lines are skipped (both before the header too). Header
 * names are trimmed and case-folded; columns other than the ones below are ignored. Every data row
 * has as many cells as the header. Key columns, exactly one form:
 *   `frame`                  one frame (its index, from 0);
 *   `start_frame,end_frame`  an inclusive range of frames;
 *   `time`                   one time in seconds: the frame whose timestamp is nearest;
 *   `start_time,end_time`    a half-open range of seconds [start, end): every frame inside.
 * Label column, exactly one: `label` (a class name, matched by name) or `label_index` (a class
 * index; numbers count as indices only under this column). Anything else is an error naming the
 * header.
 *
 * JSON: an array of objects with the same keys (`{"frame": 3, "label": "cat"}`,
 * `{"start_time": 1.5, "end_time": 4, "label_index": 2}`), or an object `{ "labels": [ ... ] }`.
 * All rows use the same key form; each row has exactly one of `label` (a string) and `label_index`
 * (a number). A key whose value is null counts as absent (pandas writes null for a missing cell);
 * other keys are ignored. Key values are JSON numbers.
 *
 * Values: frames are non-negative integers, times finite and non-negative; start <= end for frames,
 * start < end for times. Against the recording: a frame must be below its frame count; a `time`
 * must lie within half a frame interval (the median interval of the recording's timestamps) of
 * some frame; a time range must lie within one interval of the first and last timestamps and hold
 * at least one frame. Rows that overlap must agree: the same frame given two classes is an error
 * naming both rows; the same class twice is fine.
 *
 * Names are matched once per distinct name with matchClassNames (folded names, an optional class
 * map); `label_index` must be below the model's class count. At most MAX_LABEL_ROWS rows; the
 * result holds one entry per labelled frame (never more than the frame count), sorted by frame.
 * Memory is bounded by the file's text and the recording's frame count whatever the ranges say.
 */

export type LabelFileFormat = 'csv' | 'json';

/** Rows a label file may hold: a day of 10 fps video is under a million frames. */
export const MAX_LABEL_ROWS = 1_000_000;
/** As ClassMappingSchema's names: a longer name is not a class name. */
const MAX_NAME_CHARS = 4096;

export interface LabelFileRow {
  /** The file's line the row starts on (1-based), for errors. */
  line: number;
  /** Frames (inclusive) or seconds ([start, end)); a single frame or time has start === end. */
  start: number;
  end: number;
  key: 'frame' | 'time';
  /** A class name, or under `label_index` the index in decimal. */
  label: string;
  byIndex: boolean;
}

export interface ParsedLabelFile {
  key: 'frame' | 'time';
  rows: LabelFileRow[];
}

export interface LabelImport {
  /** Labelled frames, ascending, each once. */
  frames: Int32Array;
  /** The model class of each frame in `frames`. */
  classIndices: Int32Array;
  /** How the names became classes; null when every row used `label_index`. */
  mapping: ClassMapping | null;
  rows: number;
  key: 'frame' | 'time';
}

export function labelFileFormatOf(fileName: string): LabelFileFormat | null {
  const match = /\.(csv|json)$/iu.exec(fileName.trim());
  return match === null ? null : (match[1]!.toLowerCase() as LabelFileFormat);
}

type KeyForm = 'frame' | 'frame-range' | 'time' | 'time-range';
const KEY_FORMS: readonly { form: KeyForm; columns: readonly string[] }[] = [
  { form: 'frame', columns: ['frame'] },
  { form: 'frame-range', columns: ['start_frame', 'end_frame'] },
  { form: 'time', columns: ['time'] },
  { form: 'time-range', columns: ['start_time', 'end_time'] },
];
const formText = (form: KeyForm): string => KEY_FORMS.find((f) => f.form === form)!.columns.join(' and ');
const LABEL_COLUMNS = ['label', 'label_index'] as const;

function fail(message: string): never {
  throw new KnobError('INVALID_INPUT', message);
}

/** The one key form whose columns are all present, or an error saying what `what` has instead. */
function keyFormOf(has: (column: string) => boolean, what: string): KeyForm {
  const full = KEY_FORMS.filter((f) => f.columns.every(has));
  const partial = KEY_FORMS.filter((f) => f.columns.some(has) && !f.columns.every(has));
  for (const f of partial) fail(`${what} has '${f.columns.find(has)}' without '${f.columns.find((c) => !has(c))}'`);
  const it = full.length === 0 ? 'none' : full.map((f) => formText(f.form)).join(', ');
  if (full.length !== 1)
    fail(`${what} needs exactly one key: ${KEY_FORMS.map((f) => formText(f.form)).join(', or ')}; it has ${it}`);
  return full[0]!.form;
}

/** A key value: frames (`column` ending in `frame`) are whole, times are seconds. */
function keyValue(value: number, at: string, column: string): number {
  const unit = column.endsWith('frame') ? '' : ' s';
  if (!Number.isFinite(value)) fail(`${at}: ${column} is not a finite number`);
  if (value < 0) fail(`${at}: ${column} ${value}${unit} is negative`);
  if (unit === '' && !Number.isInteger(value)) fail(`${at}: ${column} ${value} is not a whole frame index`);
  return value;
}

function labelName(value: unknown, at: string): string {
  if (typeof value !== 'string')
    fail(`${at}: label is a class name (a string); give a class index under 'label_index'`);
  const name = value.trim();
  if (name === '') fail(`${at}: label is empty`);
  if (name.length > MAX_NAME_CHARS) fail(`${at}: label is over ${MAX_NAME_CHARS} characters`);
  return name;
}

function labelIndex(value: number, at: string): string {
  if (!Number.isFinite(value) || value < 0 || !Number.isInteger(value))
    fail(`${at}: label_index is not a non-negative whole number`);
  return String(value);
}

/** One row from its key values (`num` reads a key column as a number) and its label. */
function buildRow(
  line: number,
  form: KeyForm,
  num: (column: string) => number,
  label: string,
  byIndex: boolean,
  at: string,
): LabelFileRow {
  const read = (column: string): number => keyValue(num(column), at, column);
  if (form === 'frame' || form === 'time') {
    const value = read(form);
    return { line, start: value, end: value, key: form, label, byIndex };
  }
  if (form === 'frame-range') {
    const [start, end] = [read('start_frame'), read('end_frame')];
    if (start > end) fail(`${at}: start_frame ${start} is after end_frame ${end}`);
    return { line, start, end, key: 'frame', label, byIndex };
  }
  const [start, end] = [read('start_time'), read('end_time')];
  if (!(start < end)) fail(`${at}: start_time ${start} s is not before end_time ${end} s (the range is [start, end))`);
  return { line, start, end, key: 'time', label, byIndex };
}

const keyOf = (form: KeyForm): 'frame' | 'time' => (form === 'frame' || form === 'frame-range' ? 'frame' : 'time');

const NUMBER_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/u;

function cellNumber(cell: string, at: string, column: string): number {
  if (cell === '') fail(`${at}: ${column} is empty`);
  if (!NUMBER_TEXT.test(cell)) fail(`${at}: ${column} is not a number`);
  return Number(cell);
}

function shortList(cells: readonly string[]): string {
  const shown = cells.slice(0, 12).map((c) => (c.length > 40 ? `${c.slice(0, 40)}...` : c));
  return shown.join(',') + (cells.length > 12 ? `,... (${cells.length} columns)` : '');
}

function parseCsv(text: string, where: string, maxRows: number): ParsedLabelFile {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let header: { columns: string[]; form: KeyForm; labelColumn: number; byIndex: boolean } | null = null;
  const rows: LabelFileRow[] = [];
  let lineNo = 0;
  for (let pos = 0; pos <= body.length;) {
    // walked line by line (no split): the text is the only thing held whatever its length
    const newline = body.indexOf('\n', pos);
    const end = newline < 0 ? body.length : newline;
    const line = body.slice(pos, body[end - 1] === '\r' ? end - 1 : end);
    pos = end + 1;
    lineNo++;
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const at = `${where}: line ${lineNo}`;
    const cells = splitCsvLine(line, at);
    if (header === null) {
      const columns = cells.map((c) => c.trim().toLowerCase());
      const what = `${at}: the header '${shortList(cells)}'`;
      for (const name of [...KEY_FORMS.flatMap((f) => f.columns), ...LABEL_COLUMNS])
        if (columns.indexOf(name) !== columns.lastIndexOf(name)) fail(`${what} names '${name}' twice`);
      const form = keyFormOf((c) => columns.includes(c), what);
      const labels = LABEL_COLUMNS.filter((c) => columns.includes(c));
      if (labels.length !== 1)
        fail(`${what} needs exactly one label column, 'label' (a class name) or 'label_index' (a class index)`);
      header = { columns, form, labelColumn: columns.indexOf(labels[0]!), byIndex: labels[0] === 'label_index' };
      continue;
    }
    if (rows.length >= maxRows) fail(`${where}: more than ${maxRows} label rows (the limit)`);
    const { columns, form, labelColumn, byIndex } = header;
    if (cells.length !== columns.length)
      fail(`${at}: ${cells.length} cells where the header has ${columns.length} columns`);
    const raw = cells[labelColumn]!;
    const label = byIndex ? labelIndex(cellNumber(raw, at, 'label_index'), at) : labelName(raw, at);
    const num = (column: string): number => cellNumber(cells[columns.indexOf(column)]!, at, column);
    rows.push(buildRow(lineNo, form, num, label, byIndex, at));
  }
  if (header === null) fail(`${where}: no header row (a CSV label file starts with e.g. 'frame,label')`);
  if (rows.length === 0) fail(`${where}: no label rows after the header`);
  return { key: keyOf(header.form), rows };
}

/**
 * The line each element of the rows array starts on (JSON.parse gives no positions). `inObject`:
 * the rows are the value of the top-level object's "labels" key (the last one, as JSON.parse
 * keeps). Only called on text JSON.parse accepted, so every element is found.
 */
function jsonElementLines(text: string, inObject: boolean): number[] {
  const arrayDepth = inObject ? 2 : 1;
  let lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inTarget = false;
  let expectElement = false;
  let lastKey = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\n') line++;
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') continue;
    if (inTarget && depth === arrayDepth && expectElement && c !== ']') {
      lines.push(line);
      expectElement = false;
    }
    if (c === '"') {
      const start = i;
      for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (depth === 1 && inObject) {
        const raw = text.slice(start, i + 1);
        lastKey = raw.includes('\\') ? String(JSON.parse(raw)) : raw.slice(1, -1);
      }
    } else if (c === '[' || c === '{') {
      depth++;
      if (c === '[' && depth === arrayDepth && (!inObject || lastKey === 'labels')) {
        inTarget = true;
        expectElement = true;
        lines = [];
      }
    } else if (c === ']' || c === '}') {
      if (depth === arrayDepth) inTarget = false;
      depth--;
    } else if (c === ',' && inTarget && depth === arrayDepth) expectElement = true;
  }
  return lines;
}

function parseJson(text: string, where: string, maxRows: number): ParsedLabelFile {
  const raw = parseJsonText(text, where);
  const inObject = raw !== null && typeof raw === 'object' && !Array.isArray(raw);
  const items = inObject ? (raw as Record<string, unknown>)['labels'] : raw;
  if (!Array.isArray(items))
    fail(`${where}: a JSON label file is an array of rows or an object { "labels": [ rows ] }`);
  if (items.length > maxRows) fail(`${where}: ${items.length} label rows, more than ${maxRows} (the limit)`);
  if (items.length === 0) fail(`${where}: no label rows`);
  const lines = jsonElementLines(text, inObject);
  const rows: LabelFileRow[] = [];
  let first: { form: KeyForm; line: number } | null = null;
  items.forEach((item: unknown, i) => {
    const line = lines[i] ?? i + 1;
    const at = `${where}: line ${line}`;
    if (item === null || typeof item !== 'object' || Array.isArray(item))
      fail(`${at}: row ${i + 1} is not an object like {"frame": 3, "label": "cat"}`);
    const row = item as Record<string, unknown>;
    const has = (column: string): boolean => row[column] !== undefined && row[column] !== null;
    const form = keyFormOf(has, `${at}: row ${i + 1}`);
    if (first === null) first = { form, line };
    else if (form !== first.form)
      fail(
        `${at}: row ${i + 1} is keyed by ${formText(form)}, the first row (line ${first.line}) by ${formText(first.form)}; all rows use one key form`,
      );
    if (has('label') === has('label_index'))
      fail(`${at}: row ${i + 1} needs exactly one of 'label' (a class name) and 'label_index' (a class index)`);
    const byIndex = has('label_index');
    const num = (column: string): number => {
      const value = row[column];
      if (typeof value !== 'number') fail(`${at}: ${column} is not a number`);
      return value;
    };
    const label = byIndex ? labelIndex(num('label_index'), at) : labelName(row['label'], at);
    rows.push(buildRow(line, form, num, label, byIndex, at));
  });
  return { key: keyOf(first!.form), rows };
}

/** The rows of a label file, checked on their own. `maxRows` is for tests. */
export function parseLabelFile(
  text: string,
  where: string,
  format: LabelFileFormat,
  maxRows = MAX_LABEL_ROWS,
): ParsedLabelFile {
  return format === 'csv' ? parseCsv(text, where, maxRows) : parseJson(text, where, maxRows);
}

const seconds = (x: number): string => `${Number(x.toPrecision(7))} s`;

interface Timeline {
  ts: Float64Array;
  n: number;
  /** The median gap between frames: a paused camera's long gaps do not widen it. */
  interval: number;
}

function timelineOf(ts: Float64Array, n: number, where: string): Timeline {
  if (n < 2) fail(`${where}: the recording has ${n} frame(s), too few to match times to frames`);
  if (ts.length < n) fail(`${where}: the recording has ${ts.length} timestamps for ${n} frames`);
  const gaps = new Float64Array(n - 1);
  for (let i = 1; i < n; i++) {
    gaps[i - 1] = ts[i]! - ts[i - 1]!;
    if (!(gaps[i - 1]! > 0)) fail(`${where}: the recording's timestamp of frame ${i} does not increase`);
  }
  gaps.sort();
  const mid = (n - 1) >> 1;
  const interval = (n - 1) % 2 === 1 ? gaps[mid]! : (gaps[mid - 1]! + gaps[mid]!) / 2;
  return { ts, n, interval };
}

/** The first frame whose timestamp is >= t (n when none). */
function lowerBound(ts: Float64Array, n: number, t: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ts[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function spanText(tl: Timeline): string {
  return `the recording spans ${seconds(tl.ts[0]!)} to ${seconds(tl.ts[tl.n - 1]!)} (${tl.n} frames, median interval ${seconds(tl.interval)})`;
}

/** The frames [first, last] a time row covers. */
function timeRowFrames(row: LabelFileRow, tl: Timeline, at: string): [number, number] {
  const { ts, n, interval } = tl;
  const half = interval / 2;
  if (row.start === row.end) {
    const t = row.start;
    if (!(t >= ts[0]! - half && t <= ts[n - 1]! + half)) fail(`${at}: time ${seconds(t)} is outside; ${spanText(tl)}`);
    const after = Math.min(lowerBound(ts, n, t), n - 1);
    const frame = after > 0 && t - ts[after - 1]! <= Math.abs(ts[after]! - t) ? after - 1 : after;
    if (Math.abs(ts[frame]! - t) > half)
      fail(
        `${at}: time ${seconds(t)} is ${seconds(Math.abs(ts[frame]! - t))} from the nearest frame (${frame} at ${seconds(ts[frame]!)}), more than half the median frame interval (${seconds(half)})`,
      );
    return [frame, frame];
  }
  // a range's ends are frame boundaries: one interval of slack past either end (and a hair for
  // rounding, so [0, 10) covers a 30 fps clip whose last frame is at 9.9667 s)
  const slack = interval * (1 + 1e-6);
  if (!(row.start >= ts[0]! - slack && row.end <= ts[n - 1]! + slack && row.start < row.end))
    fail(`${at}: times [${seconds(row.start)}, ${seconds(row.end)}) are outside; ${spanText(tl)}`);
  const first = lowerBound(ts, n, row.start);
  const last = lowerBound(ts, n, row.end) - 1;
  if (last < first) fail(`${at}: times [${seconds(row.start)}, ${seconds(row.end)}) hold no frame's timestamp`);
  return [first, last];
}

function classText(row: LabelFileRow, modelIndex: number, labelNames: readonly string[]): string {
  const name = labelNames[modelIndex] ?? String(modelIndex);
  return row.byIndex ? `class index ${modelIndex} ('${name}')` : `'${row.label}' (class ${modelIndex}, '${name}')`;
}

/**
 * One class per labelled frame. `where` names the file in errors. Runs in O(rows log rows +
 * frameCount) time and O(rows + frameCount) memory: each frame is written once, by the first row
 * (in start order) that covers it, and later rows only check that they agree with it.
 */
export function resolveLabelFile(
  parsed: ParsedLabelFile,
  recording: {
    frameCount: number;
    timestampsSeconds: Float64Array;
    labelNames: readonly string[];
    labelsFromMetadata: boolean;
  },
  classMap: ClassMap | null,
  where: string,
): LabelImport {
  const n = recording.frameCount;
  if (!Number.isInteger(n) || n < 0 || n > 0x7fffffff)
    fail(`${where}: the recording's frame count ${n} is not a valid frame count`);
  const { rows } = parsed;
  const labelNames = recording.labelNames;

  const nameSlot = new Map<string, number>();
  const distinct: string[] = [];
  for (const row of rows)
    if (!row.byIndex && !nameSlot.has(row.label)) {
      nameSlot.set(row.label, distinct.length);
      distinct.push(row.label);
    }
  const mapping =
    distinct.length === 0
      ? null
      : matchClassNames(distinct, { names: labelNames, fromMetadata: recording.labelsFromMetadata }, classMap, where);

  const classes = new Int32Array(rows.length);
  const starts = new Int32Array(rows.length);
  const ends = new Int32Array(rows.length);
  const timeline = parsed.key === 'time' ? timelineOf(recording.timestampsSeconds, n, where) : null;
  rows.forEach((row, r) => {
    const at = `${where}: line ${row.line}`;
    if (row.key !== parsed.key) fail(`${at}: keyed by ${row.key}, the file by ${parsed.key}`);
    if (row.byIndex) {
      const index = Number(row.label);
      if (!(Number.isInteger(index) && index >= 0 && index < labelNames.length))
        fail(
          `${at}: label_index ${row.label} is not a class of the model (it has ${labelNames.length}: 0..${labelNames.length - 1})`,
        );
      classes[r] = index;
    } else classes[r] = mapping!.pairs[nameSlot.get(row.label)!]!.modelIndex;
    if (timeline !== null) {
      [starts[r], ends[r]] = timeRowFrames(row, timeline, at);
      return;
    }
    const { start, end } = row;
    const what = start === end ? `frame ${start}` : `frames ${start}..${end}`;
    if (!(Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start <= end && end < n))
      fail(`${at}: ${what} outside the recording (${n} frames${n > 0 ? `: 0..${n - 1}` : ''})`);
    [starts[r], ends[r]] = [start, end];
  });

  const order = Array.from(rows, (_, r) => r).sort((a, b) => starts[a]! - starts[b]! || a - b);
  // at most one entry per frame, and no more than the rows cover: a few rows on a long recording stay small
  let size = 0;
  for (let r = 0; r < rows.length && size < n; r++) size = Math.min(n, size + ends[r]! - starts[r]! + 1);
  const [frames, classIndices, owner] = [new Int32Array(size), new Int32Array(size), new Int32Array(size)];
  let count = 0;
  let paintedEnd = -1;
  let runClass = -1;
  for (const r of order) {
    const start = starts[r]!;
    const c = classes[r]!;
    // rows come by start, so every frame in [start, paintedEnd] lies in the last contiguous run,
    // all of one class: agreeing with it is agreeing with every frame this row shares with others
    if (start <= paintedEnd && c !== runClass) {
      const other = owner[count - 1 - (paintedEnd - start)]!;
      fail(
        `${where}: line ${rows[other]!.line} gives frame ${start} ${classText(rows[other]!, runClass, labelNames)}, line ${rows[r]!.line} gives it ${classText(rows[r]!, c, labelNames)}`,
      );
    }
    runClass = c;
    for (let f = Math.max(start, paintedEnd + 1); f <= ends[r]!; f++) {
      frames[count] = f;
      classIndices[count] = c;
      owner[count] = r;
      count++;
    }
    paintedEnd = Math.max(paintedEnd, ends[r]!);
  }
  const [labelled, classOf] = [frames.slice(0, count), classIndices.slice(0, count)];
  return { frames: labelled, classIndices: classOf, mapping, rows: rows.length, key: parsed.key };
}
