import { extname } from 'node:path';
import { KnobError } from '../../../src-shared/errors';
import { parseJsonText } from '../../../src-shared/json-text';
import { readUserFile, userText } from '../files/user-files';
import { parseNpy, readNpzFile } from './npy-file';

/**
 * A 1-D or 2-D table of numbers (logits, probabilities or labels) from .npy, .npz (the array named
 * `key`, else the only array), .json (an array of numbers, an array of rows, or an object with
 * `key`) or .csv (one row per line, a non-numeric first line is a header). Every cell is checked.
 */
export interface NumericTable {
  rows: number;
  columns: number;
  values: Float64Array;
}

function fromRows(rows: unknown[], source: string): NumericTable {
  if (rows.length === 0) throw new KnobError('INVALID_INPUT', `${source}: the table is empty`);
  const width = Array.isArray(rows[0]) ? rows[0].length : 1;
  const values = new Float64Array(rows.length * width);
  rows.forEach((row, i) => {
    const cells = Array.isArray(row) ? row : [row];
    if (cells.length !== width)
      throw new KnobError('INVALID_INPUT', `${source}: row ${i} has ${cells.length} values, the first row ${width}`);
    cells.forEach((cell, j) => {
      const value =
        typeof cell === 'number' ? cell : typeof cell === 'string' && cell.trim() !== '' ? Number(cell) : Number.NaN;
      // The cell itself is never quoted: the file may hold anything.
      if (Number.isNaN(value))
        throw new KnobError('INVALID_INPUT', `${source}: row ${i}, column ${j} is not a number (${typeof cell})`);
      values[i * width + j] = value;
    });
  });
  return { rows: rows.length, columns: width, values };
}

export async function readNumericTable(path: string, key: string): Promise<NumericTable> {
  const extension = extname(path).toLowerCase();
  if (extension === '.npz') {
    const arrays = await readNpzFile(path, 'table');
    const names = Object.keys(arrays);
    const array = arrays[key] ?? (names.length === 1 ? arrays[names[0]] : undefined);
    if (array === undefined)
      throw new KnobError('INVALID_INPUT', `${path}: no array named '${key}' (has ${names.join(', ')})`);
    return {
      rows: array.shape[0] ?? 1,
      columns: array.shape.length > 1 ? array.shape.slice(1).reduce((a, b) => a * b, 1) : 1,
      values: array.values,
    };
  }
  const bytes = await readUserFile(path, 'table');
  if (extension === '.npy') {
    const array = parseNpy(bytes, path);
    return {
      rows: array.shape[0] ?? 1,
      columns: array.shape.length > 1 ? array.shape.slice(1).reduce((a, b) => a * b, 1) : 1,
      values: array.values,
    };
  }
  const text = userText(bytes, path);
  if (extension === '.json') {
    const parsed = parseJsonText(text, path);
    const rows = Array.isArray(parsed) ? parsed : (parsed as Record<string, unknown> | null)?.[key];
    if (!Array.isArray(rows))
      throw new KnobError('INVALID_INPUT', `${path}: expected an array, or an object with an array '${key}'`);
    return fromRows(rows, path);
  }
  if (extension === '.csv') {
    const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
    if (lines.length > 0 && lines[0].split(',').some((c) => c.trim() !== '' && Number.isNaN(Number(c)))) lines.shift();
    return fromRows(
      lines.map((l) => l.split(',')),
      path,
    );
  }
  throw new KnobError('INVALID_INPUT', `${path}: unsupported table format (use .npy, .npz, .json or .csv)`);
}
