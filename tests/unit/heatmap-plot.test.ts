/**
 * The sweep's heat map (src-shared/plots/heatmap-plot.ts): cells centred on log-spaced points,
 * refused cells hatched, the constraint boundary drawn exactly between allowed and refused
 * neighbours (not around the plot's edge), marks for the current and best settings, and the ramp's
 * ends at viridis' ends.
 */
import { describe, expect, it } from 'vitest';
import { heatmapSvg, rampColour } from '../../src-shared/plots/heatmap-plot';

const cells = (allowed: (i: number, j: number) => boolean) =>
  [0.1, 1, 10].flatMap((x, i) => [1, 10].map((y, j) => ({ x, y, value: i + j, allowed: allowed(i, j) })));

const count = (svg: string, pattern: RegExp) => svg.match(pattern)?.length ?? 0;

describe('heatmapSvg', () => {
  it('draws the boundary between the allowed and refused cells only', () => {
    // allowed: the first column (2 cells) -> one vertical edge per row between columns 0 and 1
    const svg = heatmapSvg({
      cells: cells((i) => i === 0),
      xLabel: 'zeta',
      yLabel: 'wn',
      valueLabel: 'ece',
      label: 'test',
    });
    expect(count(svg, /class="heat-cell"/g)).toBe(6);
    expect(count(svg, /class="heat-refused"/g)).toBe(4);
    expect(count(svg, /class="constraint-boundary"/g)).toBe(2);
    // everything allowed: no boundary at all (the plot's edge is not a constraint)
    const open = heatmapSvg({
      cells: cells(() => true),
      xLabel: 'zeta',
      yLabel: 'wn',
      valueLabel: 'ece',
      label: 'test',
    });
    expect(count(open, /class="constraint-boundary"/g)).toBe(0);
    // a checkerboard: every inner edge (2 x 2 vertical + 3 horizontal)
    const checker = heatmapSvg({
      cells: cells((i, j) => (i + j) % 2 === 0),
      xLabel: 'z',
      yLabel: 'w',
      valueLabel: 'v',
      label: 't',
    });
    expect(count(checker, /class="constraint-boundary"/g)).toBe(7);
  });

  it('marks the current and the best setting, and names each cell on hover', () => {
    const svg = heatmapSvg({
      cells: cells(() => true),
      marks: [
        { x: 1, y: 10, label: 'current', kind: 'current' },
        { x: 10, y: 1, label: 'best', kind: 'best' },
      ],
      xLabel: 'zeta',
      yLabel: 'wn',
      valueLabel: 'ece',
      label: 'test',
    });
    expect(svg).toContain('class="mark-current"');
    expect(svg).toContain('class="mark-best"');
    expect(svg).toContain('<title>zeta 10, wn 10: 3</title>');
  });

  it('ramps from viridis dark purple (lowest) to yellow (highest)', () => {
    expect(rampColour(0)).toBe('#440154');
    expect(rampColour(1)).toBe('#fde725');
    expect(rampColour(0.5)).toBe('#21918c');
    expect(rampColour(Number.NaN)).toBe('#440154');
  });
});
