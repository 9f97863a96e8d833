import { readFileSync } from 'node:fs';
import type { BrowserMode } from './browser-mode';

export interface ExportedJson {
  table: string;
  columns: string[];
  rows: Array<Record<string, string | number | null>>;
}

/** Clicks a table's export button and returns the downloaded file's name and text. */
async function downloaded(app: BrowserMode, button: string): Promise<{ name: string; text: string }> {
  const download = app.page.waitForEvent('download', { timeout: 20_000 });
  await app.page.getByTestId(button).click();
  const file = await download;
  return { name: file.suggestedFilename(), text: readFileSync((await file.path())!, 'utf8') };
}

/**
 * Saves the table `name` (TableExport) as CSV and as JSON through the desk's buttons and holds
 * both to the table on screen (`tableTestId`): a column for each header left in (and a low, high
 * or standard-error column after a header whose cells carry them), a row for each body row, and
 * the CSV's header line the JSON's columns. Returns the JSON for the caller's checks of values.
 * The table is read before and after the saves: a view that updated meanwhile (a figure arriving
 * late) is saved again, at most three times, so what is compared is one state of the table.
 */
export async function expectTableExported(app: BrowserMode, name: string, tableTestId: string): Promise<ExportedJson> {
  const table = app.page.getByTestId(tableTestId);
  const shown = () =>
    table.evaluate((element) => {
      const t = element as HTMLTableElement;
      const header = t.tHead?.rows[t.tHead.rows.length - 1];
      return {
        headers: [...(header?.cells ?? [])]
          .filter((c) => c.dataset.export !== 'skip')
          .map((c) => c.dataset.column ?? (c.textContent ?? '').replace(/\s+/g, ' ').trim()),
        rows: [...t.tBodies].reduce((n, body) => n + body.rows.length, 0),
        text: t.textContent ?? '',
      };
    });
  let onScreen = await shown();
  let json = await downloaded(app, `export-json-${name}`);
  let csv = await downloaded(app, `export-csv-${name}`);
  for (let attempt = 1; attempt < 3; attempt++) {
    const after = await shown();
    if (after.text === onScreen.text) break;
    onScreen = after;
    json = await downloaded(app, `export-json-${name}`);
    csv = await downloaded(app, `export-csv-${name}`);
  }
  if (json.name !== `${name}.json` || csv.name !== `${name}.csv`)
    throw new Error(`saved as ${json.name} and ${csv.name}, not ${name}.json and ${name}.csv`);
  const parsed = JSON.parse(json.text) as ExportedJson;
  if (parsed.table !== name) throw new Error(`the JSON names its table ${parsed.table}, not ${name}`);
  const expanded = parsed.columns.filter((c) => !/ \((low|high|standard error)\)$/.test(c));
  if (JSON.stringify(expanded) !== JSON.stringify(onScreen.headers))
    throw new Error(
      `columns ${JSON.stringify(parsed.columns)} are not the headers ${JSON.stringify(onScreen.headers)}`,
    );
  if (parsed.rows.length !== onScreen.rows)
    throw new Error(`${parsed.rows.length} rows exported, ${onScreen.rows} on screen`);
  const csvHeader = csv.text.split('\r\n')[0]!;
  const quoted = parsed.columns.map((c) => (/[",\r\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(',');
  if (csvHeader !== quoted) throw new Error(`the CSV's header ${csvHeader} is not the JSON's columns ${quoted}`);
  if (!csv.text.endsWith('\r\n')) throw new Error('the CSV does not end its last record');
  return parsed;
}
