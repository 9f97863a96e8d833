import { escapeXml } from '../../../src-shared/plots/svg';
import { FIGURE_PALETTE } from '../../../src-shared/plots/svg-style';
import { figurePng } from './figure-png';
import { KnobError } from '../../../src-shared/errors';
import { formatBytes } from '../files/input-limits';
import type { OutputFile } from '../files/output-files';

/**
 * The page every report is (the run's, the probes', the tuner's, the analyses'): self-contained
 * HTML with its style inline and a CSP that allows nothing else (no script, no external resource),
 * readable on screen and in print; and the figure block with its caption naming the SVG and PNG
 * written beside it.
 */
export interface ReportFigure {
  /** File stem beside the report: figure-<name>.svg and .png. */
  name: string;
  caption: string;
  svg: string;
}

export function htmlDocument(title: string, body: string): string {
  const p = FIGURE_PALETTE;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(title)}</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<style>
body{font:14px system-ui,sans-serif;margin:2em auto;max-width:960px;color:${p.text};padding:0 1em}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em;break-after:avoid}
figure{margin:0;break-inside:avoid}figure svg{max-width:100%;height:auto}figcaption{color:${p.muted};font-size:12px}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;border-bottom:1px solid ${p.grid};text-align:left;vertical-align:top}
th[scope=row]{font-weight:600;white-space:nowrap}.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.partial{padding:.5em 1em;border:2px solid #b3261e;color:#b3261e;font-weight:600}
@media print{body{margin:0;max-width:none;font-size:11px}.partial{border-width:1px}}
</style>
</head><body>
<h1>${escapeXml(title)}</h1>
${body}
</body></html>
`;
}

export function figureBlock(figure: ReportFigure): string {
  return `<figure>${figure.svg}<figcaption>${escapeXml(figure.caption)} Also beside this report: figure-${figure.name}.svg and figure-${figure.name}.png.</figcaption></figure>`;
}

/**
 * The most a report page and its SVG figures may hold together. A real report is well under a
 * megabyte (figures are decimated to their pixel columns); a 20 MB label once made a 360 MB report.
 */
export const MAX_REPORT_BYTES = 32 * 1024 * 1024;

/** report.html and each figure as SVG and PNG, as files to write with a command's other outputs. */
export function reportPageFiles(html: string, figures: ReportFigure[]): OutputFile[] {
  const bytes = [html, ...figures.map((f) => f.svg)].reduce((n, text) => n + Buffer.byteLength(text, 'utf8'), 0);
  if (bytes > MAX_REPORT_BYTES)
    throw new KnobError(
      'INVALID_INPUT',
      `the report would be ${formatBytes(bytes)}, over the limit of ${formatBytes(MAX_REPORT_BYTES)} (a label, name or metadata value too long?)`,
    );
  return [
    { name: 'report.html', data: html },
    ...figures.flatMap((figure) => [
      { name: `figure-${figure.name}.svg`, data: figure.svg },
      { name: `figure-${figure.name}.png`, data: figurePng(figure.svg) },
    ]),
  ];
}
