/** Issue 32: two reliability curves in one figure, each point at its bin's (mean score, accuracy). */
import { describe, expect, it } from 'vitest';
import type { ReliabilityBin } from '../../src-shared/metrics/reliability';
import { reliabilityOverlaySvg } from '../../src-shared/plots/reliability-overlay';
import { squareLayout } from '../../src-shared/plots/square-layout';

const bin = (lo: number, count: number, meanConfidence: number | null, accuracy: number | null): ReliabilityBin => ({
  lo,
  hi: lo + 0.5,
  count,
  meanConfidence,
  accuracy,
  gap: meanConfidence === null || accuracy === null ? null : accuracy - meanConfidence,
  wilsonLo: accuracy === null ? null : Math.max(0, accuracy - 0.1),
  wilsonHi: accuracy === null ? null : Math.min(1, accuracy + 0.1),
});

describe('reliability curves overlaid', () => {
  const svg = reliabilityOverlaySvg({
    identity: 'reliability(top-label, 2 equal-width bins)',
    width: 320,
    series: [
      { name: 'A', bins: [bin(0, 10, 0.3, 0.2), bin(0.5, 30, 0.8, 0.9)] },
      { name: 'B <"calibrated">', bins: [bin(0, 0, null, null), bin(0.5, 40, 0.75, 0.8)] },
    ],
  });

  it('draws each non-empty bin of each series at (mean score, accuracy) on the unit square', () => {
    const { left, side, y } = squareLayout(320);
    const x = (v: number) => (left + v * side).toFixed(1);
    expect(svg).toContain(`points="${x(0.3)},${y(0.2).toFixed(1)} ${x(0.8)},${y(0.9).toFixed(1)}"`);
    expect(svg).toMatch(/data-series="0" data-name="A" data-points="2"/);
    // the empty bin is left out: one point, no line
    expect(svg).toMatch(/data-series="1" data-name="B &lt;&quot;calibrated&quot;&gt;" data-points="1"/);
    expect(svg.match(/<polyline/g)).toHaveLength(1);
    expect(svg).toContain(`<rect x="${(left + 0.75 * side - 3).toFixed(1)}"`);
  });

  it('names both curves in its legend and its label, escaped', () => {
    expect(svg).toContain('>B &lt;&quot;calibrated&quot;&gt;</text>');
    expect(svg).toContain('aria-label="Reliability curves overlaid: A and B &lt;&quot;calibrated&quot;&gt;;');
  });
});

describe('up to eight curves overlaid', () => {
  const curve = (name: string, shift: number) => ({
    name,
    bins: [bin(0, 10, 0.2 + shift, 0.3), bin(0.5, 20, 0.7, 0.6 + shift)],
  });
  const eight = Array.from({ length: 8 }, (_, i) => curve(`run ${i + 1}`, i / 100));

  it('gives no two curves the same marker and line, so they stay apart in grayscale', () => {
    const svg = reliabilityOverlaySvg({ identity: 'reliability(top-label, 2 equal-width bins)', series: eight });
    const groups = svg.split('<g data-series=').slice(1);
    expect(groups).toHaveLength(8);
    const looks = groups.map((g) => {
      const dash = /<polyline[^>]*?(stroke-dasharray="[^"]*")?\/>/.exec(g)?.[1] ?? 'solid';
      const marker = /<(circle|rect|polygon)[^>]*class="legend-/.exec(g)?.[1] ?? '';
      const points = /<polygon points="([^"]*)"/.exec(g)?.[1]?.split(' ').length ?? 0;
      return `${marker}${points === 0 ? '' : points}|${dash}`;
    });
    expect(new Set(looks).size).toBe(8);
    expect(svg).toContain(
      'aria-label="Reliability curves overlaid: run 1, run 2, run 3, run 4, run 5, run 6, run 7 and run 8;',
    );
    for (const name of eight.map((c) => c.name)) expect(svg).toContain(`>${name}</text>`);
  });

  it('refuses one curve or nine', () => {
    for (const series of [eight.slice(0, 1), [...eight, curve('nine', 0)]])
      expect(() => reliabilityOverlaySvg({ identity: 'x', series })).toThrow(/draws 2 to 8 curves, got/);
  });
});
