import { escapeXml } from '../../../src-shared/plots/svg';
import type { OutputFile } from '../files/output-files';
import { figureBlock, htmlDocument, reportPageFiles, type ReportFigure } from './html-document';

/**
 * The report of a measurement (knob probe, knob tune, knob analyze): headed sections, each with
 * paragraphs, a table and a figure, in the one report page (html-document.ts). The content is
 * computed by the caller (src-shared); this only lays it out.
 */
export interface ReportTable {
  columns: string[];
  /** The first cell of a row is its heading. */
  rows: string[][];
}

export interface ReportSection {
  heading: string;
  paragraphs?: string[];
  table?: ReportTable;
  figure?: ReportFigure | null;
}

function tableHtml(table: ReportTable): string {
  const head = `<tr>${table.columns.map((c) => `<th>${escapeXml(c)}</th>`).join('')}</tr>`;
  const rows = table.rows
    .map(
      ([first, ...rest]) =>
        `<tr><th scope="row">${escapeXml(first ?? '')}</th>${rest.map((cell) => `<td${/^[-−+]?[\d.]/.test(cell) ? ' class="num"' : ''}>${escapeXml(cell)}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<table>${head}\n${rows}</table>`;
}

export function sectionReportFiles(title: string, sections: ReportSection[]): OutputFile[] {
  const body = sections
    .map((section) =>
      [
        `<h2>${escapeXml(section.heading)}</h2>`,
        ...(section.paragraphs ?? []).map((p) => `<p>${escapeXml(p)}</p>`),
        section.table ? tableHtml(section.table) : '',
        section.figure ? figureBlock(section.figure) : '',
      ].join('\n'),
    )
    .join('\n');
  const figures = sections.flatMap((s) => (s.figure ? [s.figure] : []));
  return reportPageFiles(htmlDocument(title, body), figures);
}
