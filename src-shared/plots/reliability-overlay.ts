import type { ReliabilityBin } from '../metrics/reliability';
import { escapeXml, f, footnoteTexts, line, svgDocument, text, title } from './svg';
import { figureStyle, type FigurePalette } from './svg-style';
import { squareLayout } from './square-layout';
import { unitSquareFrame } from './reliability-plot';

/**
 * Two reliability curves in one figure (A against B, before against after a calibrator): each
 * bin's accuracy at its mean score, joined in order, with its Wilson 95 % whisker, over the same
 * unit square and diagonal as the single diagram (reliability-plot.ts). The two differ in colour
 * (the static and dynamic hues), in line (solid, dashed) and in marker (circle, square), so they
 * stay apart in grayscale. Both curves must come from the same binning: the identity says which.
 */
export interface OverlaySeries {
  /** As the legend and the hover name it ("A", "temperature scaling"). */
  name: string;
  bins: readonly ReliabilityBin[];
}

export interface ReliabilityOverlayInput {
  /** The binning both curves share (their diagrams' identity). */
  identity: string;
  series: readonly [OverlaySeries, OverlaySeries];
  width?: number;
  footnotes?: string[];
  palette?: FigurePalette;
}

const STYLES = [
  { curve: 'series-static', marker: 'legend-static', dash: '', square: false },
  { curve: 'series-dynamic', marker: 'legend-dynamic', dash: ' stroke-dasharray="5 3"', square: true },
] as const;

export function reliabilityOverlaySvg(input: ReliabilityOverlayInput): string {
  const { width, left, side, stripTop, notes, y } = squareLayout(input.width ?? 320, input.footnotes);
  const height = stripTop + 14 + notes.length * 11;
  const x = (v: number): number => left + v * side;
  const parts = unitSquareFrame(x, y);
  input.series.forEach((series, s) => {
    const style = STYLES[s]!;
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
      parts.push(
        style.square
          ? `<rect x="${f(cx - 3)}" y="${f(cy - 3)}" width="6" height="6" class="${style.marker}">${hover}</rect>`
          : `<circle cx="${f(cx)}" cy="${f(cy)}" r="3.2" class="${style.marker}">${hover}</circle>`,
      );
    }
    parts.push('</g>');
    // the legend, top left inside the square (the empty corner above the diagonal)
    const legendY = y(1) + 12 + s * 14;
    // the line as drawn (solid or dashed) under its marker
    parts.push(
      line(x(0) + 3, legendY - 3, x(0) + 21, legendY - 3, style.curve).replace('/>', `${style.dash}/>`),
      style.square
        ? `<rect x="${f(x(0) + 9)}" y="${f(legendY - 6)}" width="6" height="6" class="${style.marker}"/>`
        : `<circle cx="${f(x(0) + 12)}" cy="${f(legendY - 3)}" r="3.2" class="${style.marker}"/>`,
      text(x(0) + 26, legendY, series.name, 'class="legend"'),
    );
  });
  parts.push(text(x(0.5), y(0) + 25, 'confidence (mean in each bin)', 'text-anchor="middle"'));
  parts.push(text(11, y(0.5), 'accuracy', `text-anchor="middle" transform="rotate(-90 11 ${f(y(0.5))})"`));
  parts.push(...footnoteTexts(notes, height));
  return svgDocument(
    width,
    height,
    `Reliability curves overlaid: ${input.series[0].name} and ${input.series[1].name}; ${input.identity}`,
    parts.join(''),
    figureStyle(input.palette),
  );
}
