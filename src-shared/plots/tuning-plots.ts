import type { TuningPoint } from '../tuning/tuning-objective';
import { heatmapSvg } from './heatmap-plot';
import { linePlotSvg } from './line-plot';
import type { FigurePalette } from './svg-style';

/**
 * The tuner's figures (issue 17's sweep view): the metric on the search frames (or the stride of
 * them a long recording's search screened, tuningFramesLabel) over the (zeta, wn) plane at the best
 * setting's other parameters (variant second-order, mode, tau, temperature), refused points
 * hatched with the constraint boundary drawn; and the Pareto front of the metric against the 2 %
 * settling time. They read a TuningResult, or the same fields as the API carries them (a metric that
 * is not finite as null).
 */
export interface TuningFigureCandidate {
  point: TuningPoint;
  metric: number | null;
  settlingTimeSeconds: number | null;
  feasible: boolean;
  violations: string[];
}

export interface TuningFigureInput {
  metric: string;
  identity: string;
  current: TuningFigureCandidate;
  best: TuningFigureCandidate;
  grid: TuningFigureCandidate[];
  pareto: TuningFigureCandidate[];
  /** The frames each candidate's metric is on (the search's), and the split that chose them. */
  searchFrameCount?: number;
  /** The grid and the refinement scored an even stride of this many search frames (the tuner's screening). */
  screenedFrameCount?: number | null;
  split?: string;
  searchedOnHeldOut?: boolean;
}

/**
 * Which frames the grid's and the Pareto front's metric is on, in words: the search frames (what
 * the search minimised), or the stride of them a long recording's search screened, not the
 * held-out ones the result is reported on, unless the search ran on those. The heat map, the
 * Pareto plot and the desk's table all say it the same way.
 */
export function tuningFramesLabel(
  result: Pick<TuningFigureInput, 'searchFrameCount' | 'screenedFrameCount' | 'split' | 'searchedOnHeldOut'>,
): string {
  const all = result.searchFrameCount === undefined ? 'the search frames' : `${result.searchFrameCount} search frames`;
  const frames =
    result.screenedFrameCount === undefined || result.screenedFrameCount === null
      ? all
      : `an even stride of ${result.screenedFrameCount} of the ${all} (screened)`;
  const which = result.searchedOnHeldOut === true ? `${frames} (the held-out ones)` : frames;
  return result.split === undefined ? which : `${which}, ${result.split}`;
}

function sameSlice(a: TuningFigureCandidate, b: TuningFigureCandidate): boolean {
  const [p, q] = [a.point, b.point];
  return (
    p.settings.mode === q.settings.mode &&
    p.settings.tauSeconds === q.settings.tauSeconds &&
    p.settings.discretization === q.settings.discretization &&
    p.temperature === q.temperature
  );
}

/** The grid's second-order points in the best setting's slice (empty when the grid has none). */
export function sweepSlice(result: TuningFigureInput): TuningFigureCandidate[] {
  return result.grid.filter((c) => c.point.settings.variant === 'second-order' && sameSlice(c, result.best));
}

export function tuningHeatmapSvg(result: TuningFigureInput, options: { palette?: FigurePalette } = {}): string | null {
  const slice = sweepSlice(result);
  if (slice.length === 0) return null;
  // the current and the best setting, each marked only where it lies in the plane drawn
  const inSlice = (c: TuningFigureCandidate) =>
    c.point.settings.variant === 'second-order' && sameSlice(c, result.best);
  const marks = (
    [
      ['current', result.current],
      ['best', result.best],
    ] as const
  )
    .filter(([, c]) => inSlice(c))
    .map(([kind, c]) => ({
      x: c.point.settings.zeta,
      y: c.point.settings.wnRadPerSec,
      label: `${kind}: zeta ${c.point.settings.zeta.toPrecision(3)}, wn ${c.point.settings.wnRadPerSec.toPrecision(3)} rad/s, ${result.metric} ${c.metric === null ? 'not finite' : c.metric.toPrecision(4)}${result.screenedFrameCount == null ? '' : ' on every search frame'}`,
      kind,
    }));
  return heatmapSvg({
    cells: slice.map((c) => ({
      x: c.point.settings.zeta,
      y: c.point.settings.wnRadPerSec,
      value: c.metric ?? Number.NaN,
      allowed: c.feasible,
      note: c.violations.join('; '),
    })),
    marks,
    xLabel: 'zeta (stability)',
    yLabel: 'wn (rad/s)',
    valueLabel: result.metric,
    label: `${result.metric} over zeta and wn on ${tuningFramesLabel(result)}`,
    footnotes: [
      `${result.identity} on ${tuningFramesLabel(result)}`,
      `hatched: breaks a constraint; x: current setting; ring: best found${result.screenedFrameCount == null ? '' : " (their marks' figures on every search frame)"}`,
    ],
    palette: options.palette,
  });
}

export function paretoPlotSvg(result: TuningFigureInput, options: { palette?: FigurePalette } = {}): string | null {
  const front = result.pareto.filter((c) => c.settlingTimeSeconds !== null && c.metric !== null);
  if (front.length === 0) return null;
  const metrics = front.map((c) => c.metric!);
  const lo = Math.min(...metrics);
  const hi = Math.max(...metrics);
  const pad = (hi - lo) * 0.1 || Math.abs(hi) * 0.05 || 0.01;
  return linePlotSvg({
    series: [
      {
        label: `Pareto front (${front.length} settings)`,
        role: 'dynamic',
        x: front.map((c) => c.settlingTimeSeconds!),
        y: metrics,
      },
    ],
    xLabel: '2 % settling time (s)',
    yLabel: `${result.metric} (${result.screenedFrameCount == null ? 'search frames' : 'screened search frames'})`,
    yMin: lo - pad,
    yMax: hi + pad,
    width: 560,
    height: 300,
    label: `Pareto front of ${result.metric} on ${tuningFramesLabel(result)} against settling time`,
    footnotes: [`${result.identity} on ${tuningFramesLabel(result)}`],
    palette: options.palette,
  });
}
