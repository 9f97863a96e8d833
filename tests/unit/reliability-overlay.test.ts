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
