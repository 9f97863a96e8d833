import { KnobError } from '../errors';

/**
 * One line of a CSV file split into cells (RFC 4180 quoting within a line): unquoted cells trimmed,
 * quoted ones as written with `""` as a quote. `at` names the file and line in errors. Label files
 * read their rows with it.
 */
function fail(message: string): never {
  throw new KnobError('INVALID_INPUT', message);
}

function skipBlanks(line: string, i: number): number {
  while (i < line.length && (line[i] === ' ' || line[i] === '\t')) i++;
  return i;
}

/**
 * The quoted cell opening at `open`: its text (`""` a quote) and the index past its closing quote.
 * A scan, not a regular expression: a backtracking match of a cell of millions of characters
 * overflows the regex stack.
 */
function quotedCell(line: string, open: number, at: string): { text: string; end: number } {
  for (let i = open + 1; ;) {
    const quote = line.indexOf('"', i);
    if (quote < 0) fail(`${at}: a quoted cell is not closed on its line`);
    if (line[quote + 1] !== '"') return { text: line.slice(open + 1, quote).replaceAll('""', '"'), end: quote + 1 };
    i = quote + 2;
  }
}

/** A line's cells: unquoted ones trimmed, quoted ones as written with `""` as a quote. */
export function splitCsvLine(line: string, at: string): string[] {
  const cells: string[] = [];
  let i = 0;
  for (;;) {
    i = skipBlanks(line, i);
    if (line[i] === '"') {
      const quoted = quotedCell(line, i, at);
      i = skipBlanks(line, quoted.end);
      if (i < line.length && line[i] !== ',') fail(`${at}: text after a quoted cell`);
      cells.push(quoted.text);
    } else {
      const comma = line.indexOf(',', i);
      const end = comma < 0 ? line.length : comma;
      const cell = line.slice(i, end).trim();
      if (cell.includes('"')) fail(`${at}: a double quote inside an unquoted cell (quote the whole cell)`);
      cells.push(cell);
      i = end;
    }
    if (i >= line.length) return cells;
    i++; // past the comma
  }
}
