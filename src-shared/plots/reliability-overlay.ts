import type { ReliabilityBin } from '../metrics/reliability';
import { KnobError } from '../errors';
import { escapeXml, f, footnoteTexts, line, svgDocument, text, title } from './svg';
import { figureStyle, type FigurePalette } from './svg-style';
import { squareLayout } from './square-layout';
import { unitSquareFrame } from './reliability-plot';

/**
 * Two to eight reliability curves in one figure (A against B, before against after a calibrator,
 * recent runs): each bin's accuracy at its mean score, joined in order, with its Wilson 95 %
 * whisker, over the same unit square and diagonal as the single diagram (reliability-plot.ts).
 * Curve i has hue i mod 4 (static, dynamic, fused, text) and a marker and dash pattern shifted by
 * i div 4, so no two curves share both marker and line and they stay apart in grayscale: the first
 * is solid with circles, the second dashed with squares. Every curve must come from the same
 * binning: the identity says which.
 */
export interface OverlaySeries {
  /** As the legend and the hover name it ("A", "temperature scaling"). */
  name: string;
  bins: readonly ReliabilityBin[];
}

export interface ReliabilityOverlayInput {
  /** The binning both curves share (their diagrams' identity). */
  identity: string;
  /** Two to MAX_OVERLAID_CURVES curves, in the legend's order. */
  series: readonly OverlaySeries[];
  width?: number;
  footnotes?: string[];
  palette?: FigurePalette;
}

export const MAX_OVERLAID_CURVES = 8;
const HUES = ['static', 'dynamic', 'fused', 'text'] as const;
type Marker = 'circle' | 'square' | 'triangle' | 'diamond';
const MARKERS: readonly Marker[] = ['circle', 'square', 'triangle', 'diamond'];
const DASHES = ['', ' stroke-dasharray="5 3"', ' stroke-dasharray="1.5 2"', ' stroke-dasharray="6 2 1.5 2"'];

function styleOf(i: number): { curve: string; marker: string; dash: string; shape: Marker } {
  const shift = Math.floor(i / HUES.length);
  const hue = HUES[i % HUES.length]!;
  return {
    curve: `series-${hue}`,
    marker: `legend-${hue}`,
    shape: MARKERS[(i + shift) % MARKERS.length]!,
    dash: DASHES[(i + 2 * shift) % DASHES.length]!,
  };
}

/** A marker of `shape` centred at (cx, cy), with its hover title inside. */
function markerAt(shape: Marker, cx: number, cy: number, className: string, hover = ''): string {
  switch (shape) {
    case 'circle':
      return `<circle cx="${f(cx)}" cy="${f(cy)}" r="3.2" class="${className}">${hover}</circle>`;
    case 'square':
      return `<rect x="${f(cx - 3)}" y="${f(cy - 3)}" width="6" height="6" class="${className}">${hover}</rect>`;
    case 'triangle':
      return `<polygon points="${f(cx)},${f(cy - 3.8)} ${f(cx + 3.6)},${f(cy + 2.6)} ${f(cx - 3.6)},${f(cy + 2.6)}" class="${className}">${hover}</polygon>`;
    case 'diamond':
      return `<polygon points="${f(cx)},${f(cy - 4)} ${f(cx + 4)},${f(cy)} ${f(cx)},${f(cy + 4)} ${f(cx - 4)},${f(cy)}" class="${className}">${hover}</polygon>`;
  }
}

export function reliabilityOverlaySvg(input: ReliabilityOverlayInput): string {
  if (input.series.length < 2 || input.series.length > MAX_OVERLAID_CURVES)
    throw new KnobError(
      'INVALID_INPUT',
      `a reliability overlay draws 2 to ${MAX_OVERLAID_CURVES} curves, got ${input.series.length}`,
    );
  const { width, left, side, stripTop, notes, y } = squareLayout(input.width ?? 320, input.footnotes);
  const height = stripTop + 14 + notes.length * 11;
  const x = (v: number): number => left + v * side;
  const parts = unitSquareFrame(x, y);
  input.series.forEach((series, s) => {
    const style = styleOf(s);
    const shown = series.bins.filter((bin) => bin.count > 0 && bin.accuracy !== null && bin.meanConfidence !== null);
    const points = shown.map((bin) => `${f(x(bin.meanConfidence!))},${f(y(bin.accuracy!))}`).join(' ');
    parts.push(`<g data-series="${s}" data-name="${escapeXml(series.name)}" data-points="${shown.length}">`);
    if (shown.length > 1) parts.push(`<polyline points="${points}" class="${style.curve}"${style.dash}/>`);
    for (const bin of shown) {
      const [cx, cy] = [x(bin.meanConfidence!), y(bin.accuracy!)];
      if (bin.wilsonLo !== null && bin.wilsonHi !== null)
        parts.push(
          `<line x1="${f(cx)}" y1="${f(y(bin.wilsonLo))}" x2="${f(cx)}" y2="${f(y(bin.wilsonHi))}" class="${style.curve}" opacity=".5"/>`,
        );
      const hover = title(
        `${series.name}: [${bin.lo.toFixed(3)}, ${bin.hi.toFixed(3)}): ${bin.count} samples, accuracy ${bin.accuracy!.toFixed(3)} at mean score ${bin.meanConfidence!.toFixed(3)}`,
      );
      parts.push(markerAt(style.shape, cx, cy, style.marker, hover));
    }
    parts.push('</g>');
    // the legend, top left inside the square (the empty corner above the diagonal)
    const legendY = y(1) + 12 + s * 14;
    // the line as drawn (solid or dashed) under its marker
    parts.push(
      line(x(0) + 3, legendY - 3, x(0) + 21, legendY - 3, style.curve).replace('/>', `${style.dash}/>`),
      markerAt(style.shape, x(0) + 12, legendY - 3, style.marker),
      text(x(0) + 26, legendY, series.name, 'class="legend"'),
    );
  });
  parts.push(text(x(0.5), y(0) + 25, 'confidence (mean in each bin)', 'text-anchor="middle"'));
  parts.push(text(11, y(0.5), 'accuracy', `text-anchor="middle" transform="rotate(-90 11 ${f(y(0.5))})"`));
  parts.push(...footnoteTexts(notes, height));
  return svgDocument(
    width,
    height,
    `Reliability curves overlaid: ${input.series
      .slice(0, -1)
      .map((c) => c.name)
      .join(', ')} and ${input.series.at(-1)!.name}; ${input.identity}`,
    parts.join(''),
    figureStyle(input.palette),
  );
}
