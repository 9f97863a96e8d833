/** Issue 32: a table's CSV (RFC 4180, no formula injection) and JSON, at full precision. */
import { describe, expect, it } from 'vitest';
import { tableCsv, tableJson, type TableData } from '../../src-renderer/lib/table-export';

const table: TableData = {
  name: 'metrics',
  columns: ['identity', 'value', 'value (low)', 'value (high)'],
  rows: [
    ['ECE(top-label, 15 equal-width bins, [lo,hi) last closed)', 0.012345678901234567, 0.01, 0.015],
    ['say "hi"\nthen', -0.5, null, null],
    ['=HYPERLINK("x")', Infinity, null, null],
  ],
};

describe('table export', () => {
  it('writes RFC 4180 CSV: quoted where needed, quotes doubled, CRLF, numbers at full precision', () => {
    expect(tableCsv(table)).toBe(
      'identity,value,value (low),value (high)\r\n' +
        '"ECE(top-label, 15 equal-width bins, [lo,hi) last closed)",0.012345678901234567,0.01,0.015\r\n' +
        '"say ""hi""\nthen",-0.5,,\r\n' +
        // a text a spreadsheet would run as a formula is kept as text
        `"'=HYPERLINK(""x"")",Infinity,,\r\n`,
    );
  });

  it('writes JSON rows keyed by column, numbers as numbers', () => {
    const parsed = JSON.parse(tableJson(table)) as {
      table: string;
      columns: string[];
      rows: Record<string, unknown>[];
    };
    expect(parsed.table).toBe('metrics');
    expect(parsed.columns).toEqual(table.columns);
    expect(parsed.rows[0]).toEqual({
      identity: table.rows[0]![0],
      value: 0.012345678901234567,
      'value (low)': 0.01,
      'value (high)': 0.015,
    });
    expect(parsed.rows[2]!['value']).toBe('Infinity');
    expect(parsed.rows[1]!['value (low)']).toBeNull();
  });
});
