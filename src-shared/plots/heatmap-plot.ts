import { axisTitles, escapeXml, f, footnoteTexts, line, plotArea, svgDocument, text } from './svg';
import { figureStyle, type FigurePalette } from './svg-style';
import { logTickLabel, logTicks } from './ticks';

/**
 * A value over a plane of two log-spaced knobs (the tuner's sweep: the metric over (zeta, wn)) as
 * one SVG: a cell per grid point, coloured on a sequential ramp (viridis stops, lighter = higher;
 * readable in grayscale), cells that break a constraint hatched, the boundary between allowed and
 * refused cells drawn as a heavy line, and marked points (the current and the best setting). Cell
 * edges sit at the geometric midpoints between grid values, so each cell is centred on its point on
 * the log axes.
 */
export interface HeatmapCell {
  x: number;
  y: number;
  value: number;
  /** False: the point breaks a constraint (hatched, and the boundary drawn around the allowed ones). */
  allowed: boolean;
  /** Shown on hover (the constraints broken, say). */
  note?: string;
}

export interface HeatmapMark {
  x: number;
  y: number;
  label: string;
  kind: 'current' | 'best';
}

export interface HeatmapInput {
  cells: HeatmapCell[];
  marks?: HeatmapMark[];
  xLabel: string;
  yLabel: string;
  valueLabel: string;
  label: string;
  width?: number;
  height?: number;
  footnotes?: string[];
  palette?: FigurePalette;
}

/** Viridis at five stops (matplotlib's), interpolated in sRGB. */
const RAMP: Array<[number, number, number]> = [
  [0x44, 0x01, 0x54],
  [0x3b, 0x52, 0x8b],
  [0x21, 0x91, 0x8c],
  [0x5e, 0xc9, 0x62],
  [0xfd, 0xe7, 0x25],
];

export function rampColour(fraction: number): string {
  const t = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(t));
  const u = t - i;
  const channel = (c: number) => Math.round(RAMP[i]![c]! + (RAMP[i + 1]![c]! - RAMP[i]![c]!) * u);
  return `#${[0, 1, 2].map((c) => channel(c).toString(16).padStart(2, '0')).join('')}`;
}

/** Cell edges on a log axis: geometric midpoints, half a step beyond the ends. */
function logEdges(values: number[]): number[] {
  const logs = values.map(Math.log10);
  if (logs.length === 1) return [logs[0]! - 0.05, logs[0]! + 0.05];
  const edges = [logs[0]! - (logs[1]! - logs[0]!) / 2];
  for (let i = 1; i < logs.length; i++) edges.push((logs[i - 1]! + logs[i]!) / 2);
  edges.push(logs[logs.length - 1]! + (logs[logs.length - 1]! - logs[logs.length - 2]!) / 2);
  return edges;
}

function formatValue(value: number): string {
  return Number.isFinite(value) ? Number(value.toPrecision(4)).toString() : 'not finite';
}

export function heatmapSvg(input: HeatmapInput): string {
  const width = input.width ?? 560;
  const height = input.height ?? 420;
  const area = plotArea(width, height, { left: 56, right: 96, top: 24, bottom: 40 }, input.footnotes?.length ?? 0);
  const { left, top, width: plotWidth, height: plotHeight } = area;
  const xs = [...new Set(input.cells.map((c) => c.x))].sort((a, b) => a - b);
  const ys = [...new Set(input.cells.map((c) => c.y))].sort((a, b) => a - b);
  const parts: string[] = [
    '<defs><pattern id="knob-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff" fill-opacity=".55"/><line x1="0" y1="0" x2="0" y2="6" stroke="#16191d" stroke-width="1.2" stroke-opacity=".5"/></pattern></defs>',
  ];
  if (xs.length === 0 || ys.length === 0)
    return svgDocument(width, height, input.label, text(left, top + 20, 'no points'), figureStyle(input.palette));
  const xEdges = logEdges(xs);
  const yEdges = logEdges(ys);
  const [x0, x1] = [xEdges[0]!, xEdges[xEdges.length - 1]!];
  const [y0, y1] = [yEdges[0]!, yEdges[yEdges.length - 1]!];
  const px = (log: number) => left + ((log - x0) / (x1 - x0)) * plotWidth;
  const py = (log: number) => top + (1 - (log - y0) / (y1 - y0)) * plotHeight;
  const finite = input.cells.map((c) => c.value).filter(Number.isFinite);
  const lo = finite.length ? Math.min(...finite) : 0;
  const hi = finite.length ? Math.max(...finite) : 1;
  const fraction = (v: number) => (hi > lo ? (v - lo) / (hi - lo) : 0.5);
  const at = new Map(input.cells.map((c) => [`${xs.indexOf(c.x)},${ys.indexOf(c.y)}`, c]));

  for (const [key, cell] of at) {
    const [i, j] = key.split(',').map(Number) as [number, number];
    const [cx0, cx1, cy0, cy1] = [px(xEdges[i]!), px(xEdges[i + 1]!), py(yEdges[j + 1]!), py(yEdges[j]!)];
    const hover = `${input.xLabel} ${formatValue(cell.x)}, ${input.yLabel} ${formatValue(cell.y)}: ${formatValue(cell.value)}${cell.allowed ? '' : ` (refused: ${cell.note ?? 'breaks a constraint'})`}`;
    const fill = Number.isFinite(cell.value) ? rampColour(fraction(cell.value)) : '#9aa3ad';
    parts.push(
      `<rect x="${f(cx0)}" y="${f(cy0)}" width="${f(cx1 - cx0 + 0.4)}" height="${f(cy1 - cy0 + 0.4)}" fill="${fill}" class="heat-cell" data-x="${cell.x}" data-y="${cell.y}"><title>${escapeXml(hover)}</title></rect>`,
    );
    if (!cell.allowed)
      parts.push(
        `<rect x="${f(cx0)}" y="${f(cy0)}" width="${f(cx1 - cx0 + 0.4)}" height="${f(cy1 - cy0 + 0.4)}" fill="url(#knob-hatch)" class="heat-refused" pointer-events="none"/>`,
      );
  }
  // the constraint boundary: every edge between an allowed and a refused neighbour
  const allowed = (i: number, j: number) => at.get(`${i},${j}`)?.allowed === true;
  const boundary: string[] = [];
  for (let i = 1; i < xs.length; i++)
    for (let j = 0; j < ys.length; j++)
      if (allowed(i - 1, j) !== allowed(i, j))
        boundary.push(line(px(xEdges[i]!), py(yEdges[j]!), px(xEdges[i]!), py(yEdges[j + 1]!), 'constraint-boundary'));
  for (let j = 1; j < ys.length; j++)
    for (let i = 0; i < xs.length; i++)
      if (allowed(i, j - 1) !== allowed(i, j))
        boundary.push(line(px(xEdges[i]!), py(yEdges[j]!), px(xEdges[i + 1]!), py(yEdges[j]!), 'constraint-boundary'));
  parts.push(`<g class="constraint-boundaries">${boundary.join('')}</g>`);

  for (const v of logTicks(x0, x1))
    parts.push(
      text(px(Math.log10(v)), top + plotHeight + 13, logTickLabel(v), 'text-anchor="middle" class="tick x-tick"'),
    );
  for (const v of logTicks(y0, y1))
    parts.push(text(left - 5, py(Math.log10(v)) + 3.5, logTickLabel(v), 'text-anchor="end" class="tick y-tick"'));
  parts.push(
    line(left, top + plotHeight, left + plotWidth, top + plotHeight, 'axis'),
    line(left, top, left, top + plotHeight, 'axis'),
  );
  for (const mark of input.marks ?? []) {
    const [lx, ly] = [Math.log10(mark.x), Math.log10(mark.y)];
    if (!(lx >= x0 && lx <= x1 && ly >= y0 && ly <= y1)) continue; // off the plane drawn
    const mx = px(lx);
    const my = py(ly);
    const shape =
      mark.kind === 'best'
        ? `<circle cx="${f(mx)}" cy="${f(my)}" r="6" fill="none" stroke="#ffffff" stroke-width="3"/><circle cx="${f(mx)}" cy="${f(my)}" r="6" fill="none" stroke="#16191d" stroke-width="1.5"/>`
        : `<path d="M${f(mx - 5)},${f(my - 5)}L${f(mx + 5)},${f(my + 5)}M${f(mx - 5)},${f(my + 5)}L${f(mx + 5)},${f(my - 5)}" stroke="#ffffff" stroke-width="3"/><path d="M${f(mx - 5)},${f(my - 5)}L${f(mx + 5)},${f(my + 5)}M${f(mx - 5)},${f(my + 5)}L${f(mx + 5)},${f(my - 5)}" stroke="#16191d" stroke-width="1.5"/>`;
    parts.push(`<g class="mark-${mark.kind}">${shape}<title>${escapeXml(mark.label)}</title></g>`);
  }
  // colour bar
  const barX = left + plotWidth + 24;
  const stops = 24;
  for (let s = 0; s < stops; s++) {
    const y = top + (1 - (s + 1) / stops) * plotHeight;
    parts.push(
      `<rect x="${f(barX)}" y="${f(y)}" width="14" height="${f(plotHeight / stops + 0.4)}" fill="${rampColour((s + 0.5) / stops)}"/>`,
    );
  }
  parts.push(
    text(barX + 18, top + 8, formatValue(hi), 'class="tick"'),
    text(barX + 18, top + plotHeight, formatValue(lo), 'class="tick"'),
    text(barX, top - 8, input.valueLabel, 'class="tick"'),
    `<rect x="${f(barX)}" y="${f(top + plotHeight + 16)}" width="14" height="10" fill="url(#knob-hatch)" stroke="#16191d" stroke-width=".5"/>`,
    text(barX + 18, top + plotHeight + 25, 'refused', 'class="tick"'),
    ...axisTitles(area, input.xLabel, input.yLabel),
    ...footnoteTexts(input.footnotes ?? [], height),
  );
  const style = `${figureStyle(input.palette)}.knob-figure .constraint-boundary{stroke:#16191d;stroke-width:2.5}`;
  return svgDocument(width, height, input.label, parts.join(''), style);
}
