import { describe, expect, it } from 'vitest';
import { decimateMinMax } from '../../src-shared/plots/decimate';
import { linePlotSvg } from '../../src-shared/plots/line-plot';
import type { ReliabilityBin } from '../../src-shared/metrics/reliability';
import { MIN_SUPPORT, reliabilityPlotSvg } from '../../src-shared/plots/reliability-plot';
import { logTicks, niceTicks } from '../../src-shared/plots/ticks';
import { tcePlotSvg } from '../../src-shared/plots/tce-plot';
import { testBasedCalibrationError } from '../../src-shared/metrics/test-based-calibration-error';
import { seededRandom } from '../../src-shared/random';

/** The text of every <text> element with the given class, in document order. */
function tickTexts(svg: string, cls: string): string[] {
  return [...svg.matchAll(new RegExp(`<text [^>]*class="tick ${cls}"[^>]*>([^<]*)</text>`, 'g'))].map((m) => m[1]);
}

describe('axis ticks', () => {
  it('nice ticks are 1, 2 or 5 times a power of ten and cover the range', () => {
    expect(niceTicks(0, 1, 5)).toEqual({ values: [0, 0.2, 0.4, 0.6000000000000001, 0.8, 1], decimals: 1 });
    const time = niceTicks(0, 66.6, 8);
    expect(time.values).toEqual([0, 10, 20, 30, 40, 50, 60]);
    expect(time.decimals).toBe(0);
    // A range that straddles zero has an exact zero tick, not -0 or 1e-17.
    expect(niceTicks(-0.1, 1.1, 5).values[0]).toBe(0);
    expect(niceTicks(0.001, 0.0042, 4)).toMatchObject({ decimals: 3 });
  });

  it('log ticks: every decade over a wide span, 1-2-5 over a narrow one, never closer than a factor 2', () => {
    expect(logTicks(-1, 2)).toEqual([0.1, 1, 10, 100]);
    expect(logTicks(0, 1.5)).toEqual([1, 2, 5, 10, 20]);
    for (const [lo, hi] of [
      [-2, 0.3],
      [-1.3, 1.7],
      [0, 4],
    ]) {
      const values = logTicks(lo, hi);
      for (let i = 1; i < values.length; i++) expect(values[i] / values[i - 1]).toBeGreaterThanOrEqual(2);
    }
  });
});

describe('min/max decimation', () => {
  it('a million points draw as a few per pixel column and keep every excursion', () => {
    const n = 1_000_000;
    const x = new Float64Array(n).map((_, i) => i / 1000);
    const y = new Float64Array(n).map((_, i) => Math.sin(i / 5000) * 0.1);
    y[123_457] = 5; // one-frame spike
    y[876_543] = -5;
    const points = decimateMinMax(x, y, 0, x[n - 1], 800);
    expect(points.length).toBeLessThanOrEqual(4 * 800);
    expect(points.some(([px, py]) => py === 5 && px === x[123_457])).toBe(true);
    expect(points.some(([, py]) => py === -5)).toBe(true);
    // x order is kept, so the polyline never doubles back.
    for (let i = 1; i < points.length; i++) expect(points[i][0]).toBeGreaterThanOrEqual(points[i - 1][0]);
  });

  it('non-finite values are skipped, short series are kept whole', () => {
    expect(decimateMinMax([0, 1, 2], [1, Number.NaN, 3], 0, 2, 100)).toEqual([
      [0, 1],
      [2, 3],
    ]);
  });
});

describe('reliability diagram SVG', () => {
  const bins: ReliabilityBin[] = Array.from({ length: 10 }, (_, i) => ({
    lo: i / 10,
    hi: (i + 1) / 10,
    count: i < 5 ? 0 : 10 * i,
    meanConfidence: i < 5 ? null : i / 10 + 0.05,
    accuracy: i < 5 ? null : i / 10,
    gap: i < 5 ? null : 0.05,
    wilsonLo: i < 5 ? null : i / 10 - 0.1,
    wilsonHi: i < 5 ? null : Math.min(1, i / 10 + 0.1),
  }));
  const t = Array.from({ length: 11 }, (_, i) => i / 10);
  const svg = reliabilityPlotSvg({
    identity: 'reliability(test)',
    bins,
    smooth: {
      identity: 'smooth(test)',
      t,
      accuracy: t,
      bandLo: t.map((v) => v - 0.05),
      bandHi: t.map((v) => v + 0.05),
      // No samples below 0.5: the curve must not be drawn there.
      support: t.map((v) => (v < 0.5 ? 0 : v < 0.7 ? 5 : 50)),
    },
    histogram: { identity: 'hist', edges: t, counts: bins.map((b) => b.count) },
  });

  it('has numeric tick labels on both axes and a count scale for the histogram strip', () => {
    expect(tickTexts(svg, 'x-tick')).toEqual(['0.0', '0.2', '0.4', '0.6', '0.8', '1.0']);
    expect(tickTexts(svg, 'y-tick')).toEqual(['0.0', '0.2', '0.4', '0.6', '0.8', '1.0']);
    expect(tickTexts(svg, 'count-tick')).toEqual(['90', '0']);
  });

  it('draws a bar with whisker per non-empty bin, with its numbers on hover', () => {
    expect(svg.match(/class="bar"/g)).toHaveLength(5);
    expect(svg.match(/class="whisker"/g)).toHaveLength(5);
    expect(svg).toContain('<title>[0.900, 1.000): 90 samples, accuracy 0.900 (Wilson 95 % 0.800 to 1.000)');
  });

  it('draws the smooth curve only where the data support it, faded where support is thin', () => {
    const segments = [...svg.matchAll(/<line x1="([\d.]+)"[^>]*class="smooth" opacity="([\d.]+)"/g)];
    // Segments from t=0.5 on: 0.5-0.6 (support 5, faded), 0.6-0.7 (5, faded), then solid.
    expect(segments).toHaveLength(5);
    expect(segments.map((s) => s[2])).toEqual(['0.35', '0.35', '1', '1', '1']);
    expect(MIN_SUPPORT).toBeGreaterThan(0);
  });
});

describe('line plot SVG', () => {
  it('a 10,000-frame trace gets time ticks every few seconds and a bounded number of points', () => {
    const n = 10_000;
    const x = Float64Array.from({ length: n }, (_, i) => i / 30);
    const y = Float64Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 0.2 : 0.8));
    const svg = linePlotSvg({
      series: [{ label: 'g(t) <gate>', role: 'dynamic', x, y }],
      xLabel: 'stream time (s)',
      yLabel: 'gate',
      yMin: 0,
      yMax: 1,
      width: 900,
      height: 260,
      label: 'test',
    });
    const xTicks = tickTexts(svg, 'x-tick').map(Number);
    expect(xTicks.length).toBeGreaterThanOrEqual(5);
    expect(xTicks.every(Number.isFinite)).toBe(true);
    expect(xTicks[0]).toBe(0);
    expect(tickTexts(svg, 'y-tick')).toEqual(['0.0', '0.2', '0.4', '0.6', '0.8', '1.0']);
    const points = svg.match(/<polyline points="([^"]*)"/)![1].split(' ');
    expect(points.length).toBeLessThanOrEqual(4 * 900);
    // Labels are escaped, so a series name cannot break the document.
    expect(svg).toContain('g(t) &lt;gate&gt;');
  });

  it('a log-frequency axis labels decades without crowding', () => {
    const f = Array.from({ length: 50 }, (_, i) => 0.01 * 10 ** (i / 12.25));
    const svg = linePlotSvg({
      series: [{ label: 'gain', role: 'fused', x: f, y: f.map(() => 0) }],
      xLabel: 'frequency (Hz)',
      yLabel: 'gain (dB)',
      yMin: -40,
      yMax: 10,
      xLog: true,
      label: 'bode',
    });
    expect(tickTexts(svg, 'x-tick')).toEqual(['0.01', '0.1', '1', '10', '100']);
  });
});

describe('TCE diagram', () => {
  it('draws one box per bin in score order, its empirical probability, and the rejected counts', () => {
    const random = seededRandom(3);
    const scores = Float64Array.from({ length: 400 }, () => random());
    const outcomes = Uint8Array.from(scores, (s) => (random() < 0.5 + 0.5 * (s - 0.5) ? 1 : 0));
    const tce = testBasedCalibrationError(scores, outcomes);
    const svg = tcePlotSvg({ ...tce, footnotes: [tce.identity] });
    const boxes = [...svg.matchAll(/<g data-bin="(\d+)">/g)].map((m) => Number(m[1]));
    expect(boxes).toEqual(tce.bins.map((_, b) => b));
    const rejected = [...svg.matchAll(/data-rejected="(\d+)"/g)].map((m) => Number(m[1]));
    expect(rejected).toEqual(tce.bins.map((b) => b.rejected));
    expect(rejected.reduce((a, b) => a + b, 0) / 4).toBeCloseTo(tce.value, 10);
    expect(svg).toContain(`TCE ${tce.value.toFixed(1)} %`);
    expect(svg).toContain('PAVA-BC');
  });
});
