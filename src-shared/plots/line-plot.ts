import { decimateMinMax } from './decimate';
import { axisTitles, escapeXml, f, footnoteTexts, line, plotArea, svgDocument, text } from './svg';
import { figureStyle, type FigurePalette } from './svg-style';
import { logTickLabel, logTicks, niceTicks, tickLabel } from './ticks';

/**
 * A time (or frequency) plot as one SVG: series drawn with min/max decimation to the plot's pixel
 * columns (a long trace keeps every excursion), numeric ticks on both axes at nice values, a
 * legend, and optionally a series drawn as a filled area behind the lines (the corruption severity
 * behind the gate). Used for the report's gate chart and the desk's chart exports.
 */
export type SeriesRole = 'static' | 'dynamic' | 'fused' | 'target' | 'severity';

export interface LineSeries {
  label: string;
  role: SeriesRole;
  x: ArrayLike<number>;
  y: ArrayLike<number>;
  /** Drawn as a filled area down to the axis (behind the lines). */
  area?: boolean;
}

/** A shaded region between two curves (a confidence band), drawn behind the series. */
export interface LineBand {
  label: string;
  x: ArrayLike<number>;
  lo: ArrayLike<number>;
  hi: ArrayLike<number>;
}

export interface LinePlotInput {
  series: LineSeries[];
  bands?: LineBand[];
  xLabel: string;
  yLabel: string;
  yMin: number;
  yMax: number;
  /** Plot the x axis on a log10 scale (frequency responses). */
  xLog?: boolean;
  width?: number;
  height?: number;
  label: string;
  footnotes?: string[];
  /** Colours (default: the report's light palette; the desk passes its theme's CSS variables). */
  palette?: FigurePalette;
}

export function linePlotSvg(input: LinePlotInput): string {
  const width = input.width ?? 900;
  const height = input.height ?? 260;
  const area = plotArea(width, height, { left: 48, right: 12, top: 24, bottom: 38 }, input.footnotes?.length ?? 0);
  const { left, top, width: plotWidth, height: plotHeight } = area;
  const transform = (v: number): number => (input.xLog ? Math.log10(v) : v);
  let xMin = Infinity;
  let xMax = -Infinity;
  for (const s of input.series) {
    for (let i = 0; i < s.x.length; i++) {
      const v = transform(s.x[i]);
      if (Number.isFinite(v)) {
        xMin = Math.min(xMin, v);
        xMax = Math.max(xMax, v);
      }
    }
  }
  if (!(xMax > xMin)) {
    xMin = Number.isFinite(xMin) ? xMin : 0;
    xMax = xMin + 1;
  }
  const py = (v: number): number =>
    top + (1 - (Math.min(input.yMax, Math.max(input.yMin, v)) - input.yMin) / (input.yMax - input.yMin)) * plotHeight;
  const parts: string[] = [];
  const xTicks = niceTicks(xMin, xMax, Math.max(3, Math.floor(plotWidth / 90)));
  const xTickAt = input.xLog
    ? logTicks(xMin, xMax).map((v) => ({ t: Math.log10(v), label: logTickLabel(v) }))
    : xTicks.values.map((t) => ({ t, label: tickLabel(t, xTicks.decimals) }));
  for (const { t, label } of xTickAt) {
    const at = left + ((t - xMin) / (xMax - xMin)) * plotWidth;
    parts.push(
      line(at, top, at, top + plotHeight, 'grid'),
      text(at, top + plotHeight + 13, label, 'text-anchor="middle" class="tick x-tick"'),
    );
  }
  const yTicks = niceTicks(input.yMin, input.yMax, Math.max(3, Math.floor(plotHeight / 40)));
  for (const v of yTicks.values) {
    parts.push(
      line(left, py(v), left + plotWidth, py(v), 'grid'),
      text(left - 5, py(v) + 3.5, tickLabel(v, yTicks.decimals), 'text-anchor="end" class="tick y-tick"'),
    );
  }
  parts.push(
    line(left, top + plotHeight, left + plotWidth, top + plotHeight, 'axis'),
    line(left, top, left, top + plotHeight, 'axis'),
  );
  for (const band of input.bands ?? []) parts.push(bandPolygon(band, transform, xMin, xMax, left, plotWidth, py));
  const ordered = [...input.series.filter((s) => s.area), ...input.series.filter((s) => !s.area)];
  for (const s of ordered) {
    const points = decimateMinMax(Array.from(s.x, transform), s.y, xMin, xMax, Math.max(1, Math.round(plotWidth)));
    if (points.length === 0) continue;
    const coordinates = points.map(([tx, ty]) => `${f(left + ((tx - xMin) / (xMax - xMin)) * plotWidth)},${f(py(ty))}`);
    if (s.area) {
      const base = f(py(input.yMin));
      const firstX = coordinates[0].split(',')[0];
      const lastX = coordinates[coordinates.length - 1].split(',')[0];
      parts.push(
        `<polygon points="${firstX},${base} ${coordinates.join(' ')} ${lastX},${base}" class="series-${s.role}"><title>${escapeXml(s.label)}</title></polygon>`,
      );
    } else {
      parts.push(
        `<polyline points="${coordinates.join(' ')}" class="series-${s.role}"><title>${escapeXml(s.label)}</title></polyline>`,
      );
    }
  }
  let legendX = left;
  for (const band of input.bands ?? []) {
    parts.push(
      `<rect x="${f(legendX)}" y="6" width="10" height="10" class="band"/>`,
      text(legendX + 14, 15, band.label),
    );
    legendX += 24 + band.label.length * 6.8;
  }
  for (const s of input.series) {
    parts.push(
      `<rect x="${f(legendX)}" y="6" width="10" height="10" class="legend-${s.role}"/>`,
      text(legendX + 14, 15, s.label),
    );
    legendX += 24 + s.label.length * 6.2;
  }
  parts.push(...axisTitles(area, input.xLabel, input.yLabel), ...footnoteTexts(input.footnotes ?? [], height));
  return svgDocument(width, height, input.label, parts.join(''), figureStyle(input.palette));
}

/**
 * A band as one polygon: per pixel column the lowest `lo` and the highest `hi` (so a long band
 * keeps its full extent), the upper edge left to right and the lower edge back.
 */
function bandPolygon(
  band: LineBand,
  transform: (v: number) => number,
  xMin: number,
  xMax: number,
  left: number,
  plotWidth: number,
  py: (v: number) => number,
): string {
  const columns = new Map<number, { lo: number; hi: number }>();
  for (let i = 0; i < band.x.length; i++) {
    const tx = transform(band.x[i]!);
    const lo = band.lo[i]!;
    const hi = band.hi[i]!;
    if (!Number.isFinite(tx) || !Number.isFinite(lo) || !Number.isFinite(hi)) continue;
    const column = Math.round(((tx - xMin) / (xMax - xMin)) * plotWidth);
    const at = columns.get(column);
    if (at === undefined) columns.set(column, { lo, hi });
    else {
      at.lo = Math.min(at.lo, lo);
      at.hi = Math.max(at.hi, hi);
    }
  }
  const ordered = [...columns.entries()].sort((a, b) => a[0] - b[0]);
  const upper = ordered.map(([c, v]) => `${f(left + c)},${f(py(v.hi))}`);
  const lower = ordered.reverse().map(([c, v]) => `${f(left + c)},${f(py(v.lo))}`);
  return `<polygon points="${[...upper, ...lower].join(' ')}" class="band"><title>${escapeXml(band.label)}</title></polygon>`;
}
