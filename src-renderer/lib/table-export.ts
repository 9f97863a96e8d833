/**
 * Every table of the desk saved as CSV or JSON, as it shows, at full precision: a cell's
 * `data-value` (the number before formatting) replaces its text, and a cell's `data-lo` and
 * `data-hi` (an interval shown beside a value) become two columns of their own after it, and a
 * cell's `data-se` (a standard error shown as "± SE") one, so a
 * table's export is ready for a spreadsheet or pandas. A column whose header says
 * `data-export="skip"` (buttons, actions) is left out. Read from the table element when the
 * operator asks, so a table needs no second description of its columns.
 */
export type TableCell = string | number | null;

export interface TableData {
  name: string;
  columns: string[];
  rows: TableCell[][];
}

const text = (element: Element): string => (element.textContent ?? '').replace(/\s+/g, ' ').trim();

function cellValue(raw: string): TableCell {
  if (raw === '') return null;
  const value = Number(raw);
  return Number.isFinite(value) || raw === 'Infinity' || raw === '-Infinity' ? value : raw;
}

/** The table's columns and rows, read from its header row (the last of <thead>) and its body rows. */
export function readTable(table: HTMLTableElement, name: string): TableData {
  const headerRow = table.tHead?.rows[table.tHead.rows.length - 1] ?? null;
  const bodyRows = [...table.tBodies].flatMap((body) => [...body.rows]);
  const width = Math.max(headerRow?.cells.length ?? 0, ...bodyRows.map((row) => row.cells.length));
  const headers = Array.from({ length: width }, (_, c) => headerRow?.cells[c] ?? null);
  const kept = headers.map((header) => header?.dataset.export !== 'skip');
  const withInterval = headers.map((_, c) =>
    bodyRows.some((row) => row.cells[c]?.dataset.lo !== undefined || row.cells[c]?.dataset.hi !== undefined),
  );
  const withError = headers.map((_, c) => bodyRows.some((row) => row.cells[c]?.dataset.se !== undefined));
  const columns: string[] = [];
  headers.forEach((header, c) => {
    if (!kept[c]) return;
    const label = header === null ? `column ${c + 1}` : (header.dataset.column ?? text(header));
    columns.push(label);
    if (withInterval[c]) columns.push(`${label} (low)`, `${label} (high)`);
    if (withError[c]) columns.push(`${label} (standard error)`);
  });
  const rows = bodyRows.map((row) => {
    const out: TableCell[] = [];
    for (let c = 0; c < width; c++) {
      if (!kept[c]) continue;
      const cell = row.cells[c];
      out.push(
        cell === undefined ? null : cell.dataset.value !== undefined ? cellValue(cell.dataset.value) : text(cell),
      );
      if (withInterval[c]) out.push(cellValue(cell?.dataset.lo ?? ''), cellValue(cell?.dataset.hi ?? ''));
      if (withError[c]) out.push(cellValue(cell?.dataset.se ?? ''));
    }
    return out;
  });
  return { name, columns, rows };
}

/**
 * RFC 4180: fields with a comma, a quote or a line break quoted, quotes doubled, CRLF between
 * records. A text field a spreadsheet would run as a formula (starting =, +, -, @, tab or CR) is
 * prefixed with an apostrophe (OWASP's CSV injection advice); numbers are written as numbers.
 */
export function tableCsv(table: TableData): string {
  const field = (value: TableCell): string => {
    if (value === null) return '';
    if (typeof value === 'number') return String(value);
    const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
    return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  return [table.columns, ...table.rows].map((row) => row.map(field).join(',')).join('\r\n') + '\r\n';
}

/** JSON: the table's name, its columns, and one object per row keyed by column (numbers as numbers; Infinity as a string). */
export function tableJson(table: TableData): string {
  const rows = table.rows.map((row) =>
    Object.fromEntries(
      table.columns.map((column, c) => {
        const value = row[c] ?? null;
        return [column, typeof value === 'number' && !Number.isFinite(value) ? String(value) : value];
      }),
    ),
  );
  return `${JSON.stringify({ table: table.name, columns: table.columns, rows }, null, 2)}\n`;
}
