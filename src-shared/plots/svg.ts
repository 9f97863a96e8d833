/**
 * The few pieces every figure's SVG is made of. Figures are plain SVG strings (no DOM), so the
 * desk, the HTML report and the PNG and SVG files beside it draw the same figure from the same code;
 * styling is by class names (svg-style.ts gives the colours).
 */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export const f = (value: number): string => (Number.isFinite(value) ? value.toFixed(1) : '0');

export function text(x: number, y: number, content: string, attributes = ''): string {
  return `<text x="${f(x)}" y="${f(y)}" ${attributes}>${escapeXml(content)}</text>`;
}

export function line(x1: number, y1: number, x2: number, y2: number, cls: string): string {
  return `<line x1="${f(x1)}" y1="${f(y1)}" x2="${f(x2)}" y2="${f(y2)}" class="${cls}"/>`;
}

export function title(content: string): string {
  return `<title>${escapeXml(content)}</title>`;
}

/** A standalone SVG document: its size, a label for assistive technology, and its styles inline. */
export function svgDocument(width: number, height: number, label: string, body: string, style: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(label)}" class="knob-figure"><style>${style}</style>${body}</svg>`;
}

/** The x axis title under a plot area and the y axis title turned along its left edge. */
export function axisTitles(plot: PlotArea, xLabel: string, yLabel: string): string[] {
  const middle = plot.top + plot.height / 2;
  return [
    text(plot.left + plot.width / 2, plot.top + plot.height + 28, xLabel, 'text-anchor="middle"'),
    text(11, middle, yLabel, `text-anchor="middle" transform="rotate(-90 11 ${f(middle)})"`),
  ];
}

/** How far apart the footnote lines stand, in pixels. */
const FOOTNOTE_LINE = 11;

/** One line per footnote at the bottom of a figure `figureHeight` tall (FOOTNOTE_LINE px apart). */
export function footnoteTexts(notes: string[], figureHeight: number): string[] {
  return notes.map((note, i) =>
    text(4, figureHeight - 4 - (notes.length - 1 - i) * FOOTNOTE_LINE, note, 'class="footnote" font-size="9"'),
  );
}

/** Where a figure's plot stands: its top-left corner and size, in pixels (axisTitles takes it as is). */
export interface PlotArea {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * The plot area of a figure `width` x `height` inside these margins, the bottom one grown by a
 * line for each of `footnoteCount` footnotes (footnoteTexts).
 */
export function plotArea(
  width: number,
  height: number,
  margins: { left: number; right: number; top: number; bottom: number },
  footnoteCount: number,
): PlotArea {
  const { left, right, top } = margins;
  const bottom = margins.bottom + footnoteCount * FOOTNOTE_LINE;
  return { left, top, width: width - left - right, height: height - top - bottom };
}
