import type { ReliabilityBin, SmoothCurveArrays } from '../metrics/reliability';
import { f, line, svgDocument, text, title } from './svg';
import { figureStyle, type FigurePalette } from './svg-style';
import { niceTicks, tickLabel } from './ticks';
import { squareLayout } from './square-layout';

/**
 * The reliability diagram as one SVG, drawn the same in the desk, the report and the exported files:
 * bars of accuracy per bin with their Wilson 95 % whiskers, the diagonal of perfect calibration,
 * numeric ticks on both axes, the smooth reliability curve with its bootstrap band drawn only where
 * enough samples support it (faded where few do, left out where almost none do), the histogram of
 * the scores as a strip under the axis with its count scale, and every bin's numbers on hover.
 */

export interface ReliabilityPlotInput {
  identity: string;
  bins: ReliabilityBin[];
  smooth?: SmoothCurveArrays | null;
  histogram?: { identity: string; edges: number[]; counts: number[] } | null;
  /** What the axes are: the top label's confidence and accuracy, or one class's probability and frequency. */
  xLabel?: string;
  yLabel?: string;
  width?: number;
  /** Lines of small print under the figure (the identities), so an exported file says what it shows. */
  footnotes?: string[];
  /** Colours (default: the report's light palette; the desk passes its theme's CSS variables). */
  palette?: FigurePalette;
}

/** Support (kernel-weighted samples) at which the smooth curve is drawn solid, and below which not at all. */
export const SOLID_SUPPORT = 10;
export const MIN_SUPPORT = 3;

const fixed = (v: number | null, digits = 3): string => (v === null ? '—' : v.toFixed(digits));

/** The unit square of every reliability figure: grid, ticks on both axes, the axes and the diagonal of perfect calibration. */
export function unitSquareFrame(x: (v: number) => number, y: (v: number) => number): string[] {
  const parts: string[] = [];
  const ticks = niceTicks(0, 1, 5);
  for (const v of ticks.values) {
    parts.push(line(x(v), y(0), x(v), y(1), 'grid'), line(x(0), y(v), x(1), y(v), 'grid'));
    parts.push(text(x(v), y(0) + 13, tickLabel(v, ticks.decimals), 'text-anchor="middle" class="tick x-tick"'));
    parts.push(text(x(0) - 5, y(v) + 3.5, tickLabel(v, ticks.decimals), 'text-anchor="end" class="tick y-tick"'));
  }
  parts.push(line(x(0), y(0), x(1), y(0), 'axis'), line(x(0), y(0), x(0), y(1), 'axis'));
  parts.push(line(x(0), y(0), x(1), y(1), 'diagonal'));
  return parts;
}

export function reliabilityPlotSvg(input: ReliabilityPlotInput): string {
  const { width, left, side, stripTop, notes, y } = squareLayout(input.width ?? 320, input.footnotes);
  const stripHeight = input.histogram ? 22 : 0;
  const height = stripTop + stripHeight + (input.histogram ? 16 : 0) + 14 + notes.length * 11;
  const x = (v: number): number => left + v * side;
  const parts = unitSquareFrame(x, y);
  for (const bin of input.bins) {
    if (bin.count === 0 || bin.accuracy === null) continue;
    const hover = `[${bin.lo.toFixed(3)}, ${bin.hi.toFixed(3)}): ${bin.count} samples, accuracy ${fixed(bin.accuracy)} (Wilson 95 % ${fixed(bin.wilsonLo)} to ${fixed(bin.wilsonHi)}), mean score ${fixed(bin.meanConfidence)}, gap ${fixed(bin.gap)}`;
    const barWidth = Math.max(1, x(bin.hi) - x(bin.lo) - 1);
    parts.push(
      `<rect x="${f(x(bin.lo))}" y="${f(y(bin.accuracy))}" width="${f(barWidth)}" height="${f(y(0) - y(bin.accuracy))}" class="bar" data-count="${bin.count}">${title(hover)}</rect>`,
    );
    if (bin.wilsonLo !== null && bin.wilsonHi !== null) {
      const centre = (x(bin.lo) + x(bin.hi)) / 2;
      parts.push(line(centre, y(bin.wilsonLo), centre, y(bin.wilsonHi), 'whisker'));
    }
  }
  const smooth = input.smooth;
  if (smooth) {
    // Segment by segment: solid where the data support the curve, faded where few samples do,
    // nothing where almost none do (there the kernel only extrapolates).
    for (let i = 0; i + 1 < smooth.t.length; i++) {
      const support = Math.min(smooth.support[i], smooth.support[i + 1]);
      if (support < MIN_SUPPORT) continue;
      const opacity = support >= SOLID_SUPPORT ? 1 : 0.35;
      const [t0, t1] = [smooth.t[i], smooth.t[i + 1]];
      parts.push(
        `<polygon points="${f(x(t0))},${f(y(smooth.bandHi[i]))} ${f(x(t1))},${f(y(smooth.bandHi[i + 1]))} ${f(x(t1))},${f(y(smooth.bandLo[i + 1]))} ${f(x(t0))},${f(y(smooth.bandLo[i]))}" class="band" opacity="${opacity}"/>`,
        `<line x1="${f(x(t0))}" y1="${f(y(smooth.accuracy[i]))}" x2="${f(x(t1))}" y2="${f(y(smooth.accuracy[i + 1]))}" class="smooth" opacity="${opacity}"${opacity < 1 ? ' stroke-dasharray="3 3"' : ''}>${title(`t = ${t0.toFixed(2)}: smoothed accuracy ${smooth.accuracy[i].toFixed(3)} (band ${smooth.bandLo[i].toFixed(3)} to ${smooth.bandHi[i].toFixed(3)}), ${smooth.support[i].toFixed(0)} samples near`)}</line>`,
      );
    }
  }
  parts.push(text(x(0.5), y(0) + 25, input.xLabel ?? 'confidence', 'text-anchor="middle"'));
  parts.push(
    text(11, y(0.5), input.yLabel ?? 'accuracy', `text-anchor="middle" transform="rotate(-90 11 ${f(y(0.5))})"`),
  );
  const histogram = input.histogram;
  if (histogram) {
    const max = Math.max(1, ...histogram.counts);
    histogram.counts.forEach((count, i) => {
      const h = (count / max) * stripHeight;
      parts.push(
        `<rect x="${f(x(histogram.edges[i]))}" y="${f(stripTop + stripHeight - h)}" width="${f(Math.max(1, x(histogram.edges[i + 1]) - x(histogram.edges[i]) - 0.5))}" height="${f(h)}" class="histogram" data-count="${count}">${title(`${count} samples with score in [${histogram.edges[i].toFixed(2)}, ${histogram.edges[i + 1].toFixed(2)})`)}</rect>`,
      );
    });
    parts.push(line(x(0), stripTop + stripHeight, x(1), stripTop + stripHeight, 'axis'));
    parts.push(text(x(0) - 5, stripTop + 4, String(max), 'text-anchor="end" class="tick count-tick"'));
    parts.push(text(x(0) - 5, stripTop + stripHeight, '0', 'text-anchor="end" class="tick count-tick"'));
    parts.push(text(x(1), stripTop + stripHeight + 12, `samples per bin (max ${max})`, 'text-anchor="end"'));
  }
  notes.forEach((note, i) =>
    parts.push(text(4, height - 4 - (notes.length - 1 - i) * 11, note, 'class="footnote" font-size="9"')),
  );
  return svgDocument(
    width,
    height,
    `Reliability diagram: ${input.identity}`,
    parts.join(''),
    figureStyle(input.palette),
  );
}
