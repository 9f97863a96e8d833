/**
 * The sweep's heat map (src-shared/plots/heatmap-plot.ts): cells centred on log-spaced points,
 * refused cells hatched, the constraint boundary drawn exactly between allowed and refused
 * neighbours (not around the plot's edge), marks for the current and best settings, and the ramp's
 * ends at viridis' ends.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS, type GateVariant } from '../../src-shared/gate';
import { heatmapSvg, rampColour } from '../../src-shared/plots/heatmap-plot';
import { tuningHeatmapSvg, type TuningFigureCandidate } from '../../src-shared/plots/tuning-plots';

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

  it('leaves out a mark off the plane drawn', () => {
    const svg = heatmapSvg({
      cells: cells(() => true),
      marks: [{ x: 100, y: 1, label: 'far', kind: 'current' }],
      xLabel: 'zeta',
      yLabel: 'wn',
      valueLabel: 'ece',
      label: 'test',
    });
    expect(svg).not.toContain('mark-current');
  });
});

describe('tuningHeatmapSvg', () => {
  const candidate = (
    zeta: number,
    wnRadPerSec: number,
    variant: GateVariant = 'second-order',
  ): TuningFigureCandidate => ({
    point: { settings: { ...DEFAULT_GATE_SETTINGS, variant, zeta, wnRadPerSec }, temperature: 1 },
    metric: zeta / 10,
    settlingTimeSeconds: 1,
    feasible: true,
    violations: [],
  });
  const grid = [0.5, 1].flatMap((zeta) => [2, 4].map((wn) => candidate(zeta, wn)));

  it('marks the current and the best setting each as itself', () => {
    const svg = tuningHeatmapSvg({
      metric: 'ece',
      identity: 'ECE',
      current: grid[0]!,
      best: grid[3]!,
      grid,
      pareto: [],
    })!;
    expect(svg).toMatch(/class="mark-current">.*<title>current: zeta 0\.500/);
    expect(svg).toMatch(/class="mark-best">.*<title>best: zeta 1\.00/);
  });

  it('an ema current setting is not drawn on the (zeta, wn) plane, and the best is not mistaken for it', () => {
    const ema = candidate(0.7, 3, 'ema');
    const svg = tuningHeatmapSvg({ metric: 'ece', identity: 'ECE', current: ema, best: grid[3]!, grid, pareto: [] })!;
    expect(svg).not.toContain('mark-current');
    expect(svg).toMatch(/class="mark-best">.*<title>best: /);
  });
});
