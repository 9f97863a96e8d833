import {
  Dictionary,
  Field,
  FixedSizeList,
  Float32,
  Float64,
  Int32,
  makeData,
  AsyncByteQueue,
  RecordBatch,
  RecordBatchFileWriter,
  RecordBatchReader,
  Schema,
  Struct,
  Table,
  Uint32,
  Utf8,
  vectorFromArray,
  type Data,
} from 'apache-arrow';
import { KnobError } from '../../../src-shared/errors';
import { LABEL_ORIGINS, LabelLayers } from '../../../src-shared/labels/label-layers';
import { parseJsonText } from '../../../src-shared/json-text';
import { parseGateSettings, type GateSettings } from '../../../src-shared/gate/gate-settings';
import type { ReplayOutput } from '../../../src-shared/trace/replay';
import {
  TRACE_FORMAT_VERSION,
  UNKNOWN_LABEL,
  validateTrace,
  type MetadataColumn,
  type Trace,
} from '../../../src-shared/trace/trace';
import { joinedChunks, writeOutputFile } from '../files/output-files';
import { checkTextField, checkTextTree } from '../files/text-fields';
import { readUserFile } from '../files/user-files';
import { checkTraceRows, checkTraceSchema } from './trace-schema';
import { column, listRows, numbers, primitive, rowsOf } from './arrow-columns';
import { KEPT_CLASS_COLUMNS, keptClassColumns, readKeptClassColumns } from './kept-class-columns';

/**
 * Traces as Apache Arrow IPC files (the Feather v2 format: pandas.read_feather, polars and DuckDB
 * read them). One row per frame:
 *   timestamp_s (float64), z_static and z_dyn (fixed_size_list<float32>[K]; a kept-class trace has
 *   the kept_* and rest_* columns of kept-class-columns.ts in their place), u_ref (float32),
 *   label (int32, null when unknown), corruption (dictionary<utf8>), severity, continuous_severity,
 *   corruption_seed, source_frame (float64), and, when the file records a run, the outputs of the
 *   run's settings: g, v (float64, unclamped gate state), top1 (int32), confidence (float64),
 *   settings_version (uint32). A recording with imported labels or operator corrections adds
 *   label_origin (int32: 0 none, 1 the source's, 2 imported) and operator_label (int32, null where
 *   the operator corrected nothing); `label` stays the truth (issue 27: corrections never overwrite it).
 * Schema metadata: knob.trace.format_version, label names, nominal dt, and the run's settings.
 * A file from a newer format version is refused with a typed error rather than misread.
 */
const META = {
  formatVersion: 'knob.trace.format_version',
  labelNames: 'knob.trace.label_names',
  nominalDt: 'knob.trace.nominal_dt_s',
  hasLabels: 'knob.trace.has_labels',
  useCorrections: 'knob.trace.labels_use_corrections',
  settings: 'knob.run.settings',
  context: 'knob.run.context',
} as const;

export interface RecordedRun {
  settings: GateSettings;
  output: ReplayOutput;
}

export interface TraceFile {
  trace: Trace;
  run: RecordedRun | null;
  /** Free-form provenance stored with the file (model, source, schedule). */
  context: Record<string, unknown>;
}

function labelData(labels: Int32Array | null, n: number): Data<Int32> {
  const values = labels ?? new Int32Array(n).fill(UNKNOWN_LABEL);
  const bitmap = new Uint8Array(Math.ceil(n / 8));
  for (let i = 0; i < n; i++) if (values[i] !== UNKNOWN_LABEL) bitmap[i >> 3] |= 1 << (i & 7);
  return primitive(new Int32(), values, bitmap);
}

export function traceToTable(trace: Trace, run: RecordedRun | null, context: Record<string, unknown> = {}): Table {
  const n = trace.frameCount;
  const k = trace.classCount;
  const columns: Array<[string, Data]> = [
    ['timestamp_s', primitive(new Float64(), trace.timestampsSeconds.subarray(0, n))],
    ...(trace.keptClasses !== undefined
      ? keptClassColumns(trace.keptClasses, n)
      : ([
          ['z_static', rowsOf(trace.zStatic.subarray(0, n * k), k)],
          ['z_dyn', rowsOf(trace.zDyn.subarray(0, n * k), k)],
        ] as Array<[string, Data]>)),
    ['u_ref', primitive(new Float32(), trace.uRef.subarray(0, n))],
    // the truth: with label layers, corrections go beside it (operator_label), never into it
    ['label', labelData(trace.labelLayers?.truth.subarray(0, n) ?? trace.labels?.subarray(0, n) ?? null, n)],
  ];
  if (trace.labelLayers !== undefined) {
    columns.push(['label_origin', primitive(new Int32(), Int32Array.from(trace.labelLayers.origin.subarray(0, n)))]);
    columns.push(['operator_label', labelData(trace.labelLayers.operator.subarray(0, n), n)]);
  }
  // Dictionary ids numbered by column: apache-arrow's default comes from a process-wide counter,
  // so the same trace would be written with other bytes by another process (a bundle's trace hash).
  let dictionaryId = 0;
  for (const [name, column] of Object.entries(trace.metadata)) {
    if (column.kind === 'number') columns.push([name, primitive(new Float64(), column.values.subarray(0, n))]);
    else {
      const dictionary = vectorFromArray(column.dictionary, new Utf8());
      const type = new Dictionary(new Utf8(), new Int32(), dictionaryId++);
      columns.push([
        name,
        makeData({ type, length: n, data: column.codes.subarray(0, n), dictionary } as never) as Data,
      ]);
    }
  }
  if (trace.features !== undefined) {
    const { width, values } = trace.features;
    if (!Number.isInteger(width) || width < 1 || values.length < n * width)
      throw new KnobError('INVALID_TRACE', `features of width ${width} with ${values.length} values for ${n} frames`);
    columns.push(['features', rowsOf(values.subarray(0, n * width), width, 'feature')]);
  }
  if (run !== null) {
    const o = run.output;
    columns.push(['g', primitive(new Float64(), o.g.subarray(0, n))]);
    columns.push(['v', primitive(new Float64(), o.v.subarray(0, n))]);
    columns.push(['top1', primitive(new Int32(), o.top1.subarray(0, n))]);
    columns.push(['confidence', primitive(new Float64(), o.confidence.subarray(0, n))]);
    columns.push(['settings_version', primitive(new Uint32(), o.settingsVersion.subarray(0, n))]);
  }
  const metadata = new Map<string, string>([
    [META.formatVersion, String(trace.formatVersion)],
    [META.labelNames, JSON.stringify(trace.labelNames)],
    [META.nominalDt, String(trace.nominalDtSeconds)],
    [META.hasLabels, String(trace.labels !== null)],
    [META.context, JSON.stringify(context)],
  ]);
  if (trace.labelLayers !== undefined) metadata.set(META.useCorrections, String(trace.labelLayers.useCorrections));
  if (run !== null) metadata.set(META.settings, JSON.stringify(run.settings));
  const fields = columns.map(
    ([name, data]) => new Field(name, data.type, name === 'label' || name === 'operator_label'),
  );
  const schema = new Schema(fields, metadata);
  const struct = makeData({
    type: new Struct(fields),
    length: n,
    nullCount: 0,
    children: columns.map(([, data]) => data),
  });
  return new Table(schema, [new RecordBatch(schema, struct)]);
}

/**
 * A trace file's label layers: the truth was read into `labels`; the corrections and origins
 * beside it are checked like the labels, and `labels` becomes the effective column again.
 */
function restoreLabelLayers(trace: Trace, table: Table, meta: Map<string, string>, path: string): void {
  const n = trace.frameCount;
  const k = trace.classCount;
  const truth = trace.labels ?? new Int32Array(n).fill(UNKNOWN_LABEL);
  const originVector = column(table, 'label_origin', path);
  const operatorVector = column(table, 'operator_label', path);
  const origin = new Uint8Array(n);
  const operator = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const code = Number(originVector.get(i));
    if (!(Number.isInteger(code) && code >= 0 && code < LABEL_ORIGINS.length))
      throw new KnobError('INVALID_TRACE', `${path}: label_origin ${code} of frame ${i} is not a label origin`);
    origin[i] = code;
    const value = operatorVector.get(i) as number | null;
    operator[i] = value === null ? UNKNOWN_LABEL : value;
    if (!(Number.isInteger(operator[i]) && operator[i]! >= UNKNOWN_LABEL && operator[i]! < k))
      throw new KnobError('INVALID_TRACE', `${path}: operator_label ${operator[i]} of frame ${i} is not a class index`);
  }
  const layers = new LabelLayers(n, truth, {
    origin,
    operator,
    useCorrections: meta.get(META.useCorrections) !== 'false',
  });
  const labels = new Int32Array(n);
  layers.effectiveInto(labels);
  trace.labels = labels;
  trace.labelLayers = layers.columns();
}

/** The IPC writer's sink, whose chunks are read back as written: views of the columns' buffers. */
class ChunkQueue extends AsyncByteQueue {
  get chunks(): Uint8Array[] {
    return this._values;
  }
}

/**
 * A trace file as the chunks the Arrow writer writes, in order: the columns' buffers as they are
 * (views, no copy) between the messages and padding. Written one after another they are the file
 * (writeOutputFiles takes them so): a trace of an hour at 1,000 classes is 826 MiB, which a joined
 * copy would hold twice.
 */
export function traceFileChunks(
  trace: Trace,
  run: RecordedRun | null,
  context: Record<string, unknown> = {},
): Uint8Array[] {
  const sink = new ChunkQueue();
  const writer = new RecordBatchFileWriter();
  writer.reset(sink);
  writer.writeAll(traceToTable(trace, run, context));
  return sink.chunks;
}

/** The bytes of a trace file in one array (what is hashed or zipped; a file is written from its chunks). */
export function encodeTraceFile(
  trace: Trace,
  run: RecordedRun | null,
  context: Record<string, unknown> = {},
): Uint8Array {
  return joinedChunks(traceFileChunks(trace, run, context));
}

/** Writes a trace file atomically (nothing is left behind if it fails), from its chunks. */
export async function writeTraceFile(
  path: string,
  trace: Trace,
  run: RecordedRun | null,
  context: Record<string, unknown> = {},
): Promise<void> {
  await writeOutputFile(path, traceFileChunks(trace, run, context));
}

/**
 * Reads and checks a trace file. Every failure is a typed error naming the file: not Arrow, a column
 * the app does not write or of another type (trace-schema.ts, before any column is read), rows the
 * file cannot hold, a text field over the text limit, not a Knob trace, a newer format, more frames declared than the file holds, invalid stored settings, or
 * content the gate cannot run on (non-finite logits, a label outside the classes, time that does
 * not increase), found up front rather than half-way through a replay.
 */
export async function readTraceFile(
  path: string,
  /** Bytes read so far and the file's size (a trace of hours takes seconds to read). */
  onProgress?: (bytesRead: number, size: number) => void,
  /** 'kept classes too': a kept-class trace (`knob compact`) is read, not refused. */
  logits: 'every class' | 'kept classes too' = 'every class',
): Promise<TraceFile> {
  // in shared memory: the logits are decoded as views of it (listRows), so the metrics worker
  // holds the same bytes, not a copy (an hour of 1,000 classes is 860 MB)
  const bytes = await readUserFile(path, 'trace', onProgress, true);
  try {
    const file = decodeTraceFile(bytes, path);
    validateTrace(file.trace, logits);
    if (file.run !== null && file.run.output.g.length !== file.trace.frameCount) {
      throw new KnobError(
        'INVALID_TRACE',
        `the run's outputs have ${file.run.output.g.length} rows for ${file.trace.frameCount} frames`,
      );
    }
    return file;
  } catch (error) {
    if (error instanceof KnobError) {
      const message = error.message.startsWith(`${path}: `) ? error.message : `${path}: ${error.message}`;
      throw new KnobError(error.code === 'INVALID_SETTINGS' ? 'INVALID_TRACE' : error.code, message);
    }
    throw new KnobError('INVALID_TRACE', `${path}: not a readable trace (${(error as Error).message})`);
  }
}

function decodeTraceFile(bytes: Uint8Array, path: string): TraceFile {
  let table: Table;
  try {
    // The schema first (the file's footer or first message): every column known and of its type,
    // before any record batch is read; then each batch's rows within what the file can hold.
    const reader = RecordBatchReader.from(bytes);
    reader.open();
    const bytesPerRow = checkTraceSchema(reader.schema, path);
    const batches: RecordBatch[] = [];
    let rows = 0;
    for (const batch of reader) {
      rows += batch.numRows;
      checkTraceRows(rows, bytesPerRow, bytes.length, path);
      batches.push(batch);
    }
    table = new Table(reader.schema, batches);
  } catch (error) {
    if (error instanceof KnobError) throw error;
    throw new KnobError('INVALID_TRACE', `${path}: not an Arrow IPC trace file (${(error as Error).message})`);
  }
  const meta = table.schema.metadata;
  const version = Number(meta.get(META.formatVersion));
  if (!Number.isInteger(version) || version < 1)
    throw new KnobError(
      'INVALID_TRACE',
      `${path}: no Knob trace format version in the schema metadata (not a Knob trace)`,
    );
  if (version > TRACE_FORMAT_VERSION)
    throw new KnobError(
      'INVALID_TRACE',
      `${path}: trace format version ${version} is newer than this app reads (${TRACE_FORMAT_VERSION}); update Knob Studio`,
    );
  const parseJson = (key: string, fallback: unknown): unknown => {
    const raw = meta.get(key);
    if (raw === undefined) return fallback;
    try {
      return parseJsonText(raw, `schema metadata ${key}`);
    } catch {
      throw new KnobError('INVALID_TRACE', `${path}: schema metadata ${key} is not valid JSON`);
    }
  };
  const labelNames = parseJson(META.labelNames, null);
  if (!Array.isArray(labelNames) || labelNames.some((l) => typeof l !== 'string'))
    throw new KnobError('INVALID_TRACE', `${path}: label names missing from the schema metadata`);
  labelNames.forEach((name: string, i) => checkTextField(name, path, `label name ${i}`));
  const n = table.numRows;
  const k = labelNames.length;
  // Each frame holds at least its two float32 logit rows: a table declaring more than the file can
  // hold is refused before anything is allocated for it.
  const kept = table.getChild('kept_class') !== null;
  if (k === 0 || (!kept && n * k * 8 > bytes.length)) {
    throw new KnobError(
      'INVALID_TRACE',
      `${path}: declares ${n} frames of ${k} classes, more than its ${bytes.length} bytes hold`,
    );
  }
  const labelVector = column(table, 'label', path);
  const labels = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const value = labelVector.get(i) as number | null;
    labels[i] = value === null ? UNKNOWN_LABEL : value;
  }
  const metadata: Record<string, MetadataColumn> = {};
  const reserved = new Set([
    'timestamp_s',
    'z_static',
    'z_dyn',
    'u_ref',
    'label',
    'g',
    'v',
    'top1',
    'confidence',
    'settings_version',
    'features',
    'label_origin',
    'operator_label',
    ...KEPT_CLASS_COLUMNS,
  ]);
  for (const field of table.schema.fields) {
    if (reserved.has(field.name)) continue;
    const vector = column(table, field.name, path);
    if (field.type instanceof Dictionary) {
      const dictionary: string[] = [];
      const codes = new Int32Array(n);
      const index = new Map<string, number>();
      for (let i = 0; i < n; i++) {
        const value = String(vector.get(i));
        let code = index.get(value);
        if (code === undefined) {
          checkTextField(value, path, `a value of column '${field.name}'`);
          code = dictionary.push(value) - 1;
          index.set(value, code);
        }
        codes[i] = code;
      }
      metadata[field.name] = { kind: 'category', codes, dictionary };
    } else {
      metadata[field.name] = { kind: 'number', values: numbers(vector, Float64Array) };
    }
  }
  const trace: Trace = {
    formatVersion: version,
    frameCount: n,
    classCount: k,
    timestampsSeconds: numbers(column(table, 'timestamp_s', path), Float64Array),
    zStatic: kept ? new Float32Array(0) : listRows(column(table, 'z_static', path), n, k, 'z_static', path),
    zDyn: kept ? new Float32Array(0) : listRows(column(table, 'z_dyn', path), n, k, 'z_dyn', path),
    uRef: numbers(column(table, 'u_ref', path), Float32Array),
    labels: meta.get(META.hasLabels) === 'false' ? null : labels,
    labelNames: labelNames as string[],
    metadata,
    nominalDtSeconds: Number(meta.get(META.nominalDt) ?? NaN),
  };
  if (kept) trace.keptClasses = readKeptClassColumns(table, n, bytes.length, path);
  if (table.getChild('operator_label') !== null) restoreLabelLayers(trace, table, meta, path);
  const featuresField = table.schema.fields.find((f) => f.name === 'features');
  if (featuresField !== undefined) {
    const width = featuresField.type instanceof FixedSizeList ? featuresField.type.listSize : 0;
    // the same size check as the logits': a width the file cannot hold is refused before allocating
    if (!(width > 0) || n * width * 4 > bytes.length)
      throw new KnobError('INVALID_TRACE', `${path}: column 'features' is not a list of float32 values the file holds`);
    trace.features = { width, values: listRows(column(table, 'features', path), n, width, 'features', path) };
  }
  let run: RecordedRun | null = null;
  if (meta.has(META.settings) && table.getChild('g') !== null) {
    run = {
      settings: storedSettings(parseJson(META.settings, null), path),
      output: {
        g: numbers(column(table, 'g', path), Float64Array),
        v: numbers(column(table, 'v', path), Float64Array),
        top1: numbers(column(table, 'top1', path), Int32Array),
        confidence: numbers(column(table, 'confidence', path), Float64Array),
        fusedLogits: null,
        settingsVersion: numbers(column(table, 'settings_version', path), Uint32Array),
        clampedInputs: 0,
      },
    };
  }
  const context = (parseJson(META.context, {}) ?? {}) as Record<string, unknown>;
  checkTextTree(context, path, 'the run context');
  return { trace, run, context };
}

function storedSettings(raw: unknown, path: string): GateSettings {
  try {
    return parseGateSettings(raw);
  } catch (error) {
    throw new KnobError('INVALID_TRACE', `${path}: the stored run settings are invalid (${(error as Error).message})`);
  }
}
