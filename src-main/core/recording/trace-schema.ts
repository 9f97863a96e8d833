import { DataType, Precision, type Field, type Schema } from 'apache-arrow';
import { KnobError } from '../../../src-shared/errors';
import { inputLimit } from '../files/input-limits';
import { KEPT_CLASS_COLUMNS } from './kept-class-columns';

/**
 * A trace file's schema checked before any column is materialised (issue 26: an 18 MB trace of 64
 * boolean columns, each widened to float64 on reading, reached 1.16 GB). Every column must be one
 * the app writes, with the type it writes; anything else, an extra column among them, is refused
 * naming the file and the column. Since each known column is read into an array of the type it is
 * stored as, what reading costs per row is known from the schema alone, and a file whose rows
 * would cost more than its own bytes hold (lengths that lie) or more than the trace limit is
 * refused before anything is allocated.
 */
type ColumnType = 'float64' | 'float32' | 'int32' | 'uint32' | 'float32 rows' | 'uint16 rows' | 'dictionary<utf8>';

const COLUMNS: Readonly<Record<string, { type: ColumnType; required: boolean }>> = Object.freeze({
  timestamp_s: { type: 'float64', required: true },
  // either every class (z_static, z_dyn) or the kept classes (kept_*, rest_*: kept-class-columns.ts)
  z_static: { type: 'float32 rows', required: false },
  z_dyn: { type: 'float32 rows', required: false },
  kept_class: { type: 'uint16 rows', required: false },
  kept_z_static: { type: 'float32 rows', required: false },
  kept_z_dyn: { type: 'float32 rows', required: false },
  rest_lse_static: { type: 'float64', required: false },
  rest_lse_dyn: { type: 'float64', required: false },
  rest_max_static: { type: 'float32', required: false },
  rest_max_dyn: { type: 'float32', required: false },
  rest_slope_static: { type: 'float64', required: false },
  rest_slope_dyn: { type: 'float64', required: false },
  u_ref: { type: 'float32', required: true },
  label: { type: 'int32', required: true },
  corruption: { type: 'dictionary<utf8>', required: false },
  severity: { type: 'float64', required: false },
  continuous_severity: { type: 'float64', required: false },
  corruption_seed: { type: 'float64', required: false },
  source_frame: { type: 'float64', required: false },
  features: { type: 'float32 rows', required: false },
  g: { type: 'float64', required: false },
  v: { type: 'float64', required: false },
  top1: { type: 'int32', required: false },
  confidence: { type: 'float64', required: false },
  settings_version: { type: 'uint32', required: false },
  label_origin: { type: 'int32', required: false },
  operator_label: { type: 'int32', required: false },
});

const FULL_LOGIT_COLUMNS = ['z_static', 'z_dyn'];
const KEPT_CLASS_COLUMN_NAMES: readonly string[] = KEPT_CLASS_COLUMNS;

/** The columns a trace may hold, in the order the app writes them. */
export const TRACE_COLUMNS = Object.keys(COLUMNS);

/** Bytes one row of a column costs once read (what the reader allocates for it). */
function rowBytes(field: Field, type: ColumnType): number {
  if (type === 'float32 rows') return 4 * (field.type as { listSize: number }).listSize;
  if (type === 'uint16 rows') return 2 * (field.type as { listSize: number }).listSize;
  return type === 'float64' ? 8 : 4;
}

function typeOf(field: Field): ColumnType | null {
  const t = field.type as DataType;
  if (DataType.isFloat(t))
    return t.precision === Precision.DOUBLE ? 'float64' : t.precision === Precision.SINGLE ? 'float32' : null;
  if (DataType.isInt(t) && t.bitWidth === 32) return t.isSigned ? 'int32' : 'uint32';
  if (DataType.isFixedSizeList(t)) {
    const child = t.children[0]?.type as DataType | undefined;
    if (child === undefined || !(t.listSize > 0)) return null;
    if (DataType.isFloat(child) && child.precision === Precision.SINGLE) return 'float32 rows';
    return DataType.isInt(child) && child.bitWidth === 16 && !child.isSigned ? 'uint16 rows' : null;
  }
  // int32 indices, as the app writes them: narrower ones would cost more to read than they take
  if (DataType.isDictionary(t))
    return DataType.isUtf8(t.dictionary) && t.indices.bitWidth === 32 && t.indices.isSigned ? 'dictionary<utf8>' : null;
  return null;
}

function describe(field: Field): string {
  return String(field.type).slice(0, 80);
}

/** Checks every column of the schema; returns what one row costs to read, in bytes. */
export function checkTraceSchema(schema: Schema, file: string): number {
  const refuse = (message: string): never => {
    throw new KnobError('INVALID_TRACE', `${file}: ${message}`);
  };
  const seen = new Set<string>();
  let bytesPerRow = 0;
  for (const field of schema.fields) {
    const name = field.name.slice(0, 64);
    if (!Object.hasOwn(COLUMNS, field.name))
      refuse(`column '${name}' is not a trace column (a trace holds ${TRACE_COLUMNS.join(', ')})`);
    if (seen.has(field.name)) refuse(`column '${name}' appears twice`);
    seen.add(field.name);
    const expected = COLUMNS[field.name]!.type;
    const type = typeOf(field);
    if (type !== expected) refuse(`column '${name}' is ${describe(field)}, not ${expected}`);
    bytesPerRow += rowBytes(field, expected);
  }
  for (const [name, { required }] of Object.entries(COLUMNS))
    if (required && !seen.has(name)) refuse(`column '${name}' is missing`);
  const logitColumns = seen.has('kept_class') ? KEPT_CLASS_COLUMN_NAMES : FULL_LOGIT_COLUMNS;
  for (const name of logitColumns) if (!seen.has(name)) refuse(`column '${name}' is missing`);
  for (const name of seen.has('kept_class') ? FULL_LOGIT_COLUMNS : KEPT_CLASS_COLUMN_NAMES)
    if (seen.has(name))
      refuse(`column '${name}' cannot sit beside ${logitColumns[0]}: a trace holds every class or its kept classes`);
  return bytesPerRow;
}

/** Slack over the file's own bytes, so that a column's own check names a short column first. */
const ROW_BUDGET_FACTOR = 2;
const ROW_BUDGET_SLACK_BYTES = 1024 * 1024;

/**
 * Refuses `rows` rows of `bytesPerRow` when reading them would cost more than twice the file's
 * bytes (each column is stored at least as wide as it is read, so more means lengths that lie; the
 * slack lets a column's own check name a column that is merely short) or more than the trace limit.
 */
export function checkTraceRows(rows: number, bytesPerRow: number, fileBytes: number, file: string): void {
  const cost = rows * bytesPerRow;
  const budget = Math.min(ROW_BUDGET_FACTOR * fileBytes + ROW_BUDGET_SLACK_BYTES, inputLimit('trace'));
  if (cost > budget)
    throw new KnobError(
      'INVALID_TRACE',
      `${file}: declares ${rows} rows of ${bytesPerRow} bytes, more than its ${fileBytes} bytes hold or the trace limit allows`,
    );
}
