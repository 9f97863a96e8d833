import type { TceBin } from '../metrics/test-based-calibration-error';
import { f, line, svgDocument, text, title } from './svg';
import { figureStyle, type FigurePalette } from './svg-style';
import { niceTicks, tickLabel } from './ticks';
import { squareLayout } from './square-layout';

/**
 * TCE's own reliability view (Matsubara et al. 2023, their Figure 1): the bins side by side in
 * score order, equally spaced (PAVA-BC bins have unequal widths and sizes); for each, the spread of
 * its predictions as a box (quartiles) with whiskers to the extremes and a tick at the mean, and
 * the bin's empirical probability as a bar across it; under the axis, each bin's size with the
 * part whose test rejected filled in. Every bin's numbers on hover.
 */
export interface TcePlotInput {
  identity: string;
  value: number;
  bins: TceBin[];
  width?: number;
  footnotes?: string[];
  palette?: FigurePalette;
}

export function tcePlotSvg(input: TcePlotInput): string {
  const { width, left, side, stripTop, notes, y } = squareLayout(input.width ?? 320, input.footnotes);
  const stripHeight = 40;
  const height = stripTop + stripHeight + 30 + notes.length * 11;
  const slot = side / Math.max(1, input.bins.length);
  const centre = (b: number): number => left + (b + 0.5) * slot;
  const half = Math.max(1, Math.min(14, slot * 0.35));
  const parts: string[] = [];
  const ticks = niceTicks(0, 1, 5);
  for (const v of ticks.values) {
    parts.push(line(left, y(v), left + side, y(v), 'grid'));
    parts.push(text(left - 5, y(v) + 3.5, tickLabel(v, ticks.decimals), 'text-anchor="end" class="tick y-tick"'));
  }
  parts.push(line(left, y(0), left + side, y(0), 'axis'), line(left, y(0), left, y(1), 'axis'));
  const maxCount = Math.max(1, ...input.bins.map((b) => b.count));
  input.bins.forEach((bin, b) => {
    const c = centre(b);
    const rate = bin.positives / bin.count;
    const [q1, median, q3] = bin.scoreQuartiles;
    const hover =
      `bin ${b + 1}: ${bin.count} predictions in [${bin.scoreLo.toFixed(3)}, ${bin.scoreHi.toFixed(3)}], ` +
      `mean ${bin.meanScore.toFixed(3)}, median ${median.toFixed(3)}; empirical probability ${rate.toFixed(3)} ` +
      `(${bin.positives} of ${bin.count}); ${bin.rejected} predictions rejected`;
    parts.push(
      `<g data-bin="${b}">${title(hover)}` +
        line(c, y(bin.scoreLo), c, y(q1), 'whisker') +
        line(c, y(q3), c, y(bin.scoreHi), 'whisker') +
        `<rect x="${f(c - half)}" y="${f(y(q3))}" width="${f(2 * half)}" height="${f(Math.max(0.5, y(q1) - y(q3)))}" class="tce-box"/>` +
        line(c - half, y(bin.meanScore), c + half, y(bin.meanScore), 'whisker') +
        line(c - half * 1.2, y(rate), c + half * 1.2, y(rate), 'tce-rate') +
        '</g>',
    );
    const h = (count: number): number => (count / maxCount) * stripHeight;
    parts.push(
      `<rect x="${f(c - half)}" y="${f(stripTop + stripHeight - h(bin.count))}" width="${f(2 * half)}" height="${f(h(bin.count))}" class="tce-total" data-count="${bin.count}">${title(hover)}</rect>`,
      `<rect x="${f(c - half)}" y="${f(stripTop + stripHeight - h(bin.rejected))}" width="${f(2 * half)}" height="${f(h(bin.rejected))}" class="tce-rejected" data-rejected="${bin.rejected}">${title(hover)}</rect>`,
    );
  });
  parts.push(text(left + side / 2, y(0) + 14, `${input.bins.length} bins in score order`, 'text-anchor="middle"'));
  parts.push(text(11, y(0.5), 'probability', `text-anchor="middle" transform="rotate(-90 11 ${f(y(0.5))})"`));
  parts.push(line(left, stripTop + stripHeight, left + side, stripTop + stripHeight, 'axis'));
  parts.push(text(left - 5, stripTop + 4, String(maxCount), 'text-anchor="end" class="tick count-tick"'));
  parts.push(text(left - 5, stripTop + stripHeight, '0', 'text-anchor="end" class="tick count-tick"'));
  parts.push(
    text(
      left + side,
      stripTop + stripHeight + 12,
      `bin sizes; rejected filled; TCE ${input.value.toFixed(1)} %`,
      'text-anchor="end"',
    ),
  );
  notes.forEach((note, i) =>
    parts.push(text(4, height - 4 - (notes.length - 1 - i) * 11, note, 'class="footnote" font-size="9"')),
  );
  return svgDocument(width, height, `TCE diagram: ${input.identity}`, parts.join(''), figureStyle(input.palette));
}
