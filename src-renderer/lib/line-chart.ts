import {
  Chart,
  Decimation,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  LogarithmicScale,
  PointElement,
  Tooltip,
  type ChartDataset,
  type Scale,
} from 'chart.js';
import zoomPlugin from 'chartjs-plugin-zoom';
import { logTickLabel, logTicks } from '../../src-shared/plots/ticks';

Chart.register(
  LineController,
  LineElement,
  PointElement,
  LinearScale,
  LogarithmicScale,
  Legend,
  Tooltip,
  Filler,
  Decimation,
  zoomPlugin,
);

/**
 * The desk's line charts: linear time axis, fixed y range, theme colours from the CSS variables,
 * no animation and no parsing (points are {x, y} already), redrawn in place with update('none').
 */
export type Points = { x: number; y: number }[];

export function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

export function createLineChart(
  canvas: HTMLCanvasElement,
  datasets: ChartDataset<'line', Points>[],
  axes: { x: string; y: string; yMin: number; yMax: number; xLogarithmic?: boolean },
  tooltips: boolean,
  onZoom?: () => void,
): Chart<'line', Points> {
  // every chart titles both axes (issue 32): what a value is, with its unit
  const axis = (title: string) => ({
    title: { display: true, text: title, color: cssVar('--muted') },
    ticks: { color: cssVar('--muted') },
    grid: { color: cssVar('--grid') },
  });
  return new Chart<'line', Points>(canvas, {
    type: 'line',
    data: { datasets },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      parsing: false,
      normalized: true,
      spanGaps: true,
      scales: {
        x: axes.xLogarithmic
          ? {
              type: 'logarithmic',
              ...axis(axes.x),
              // The same decades (and 2x, 5x over short spans) as the report's figures, never crowded.
              ticks: {
                color: cssVar('--muted'),
                autoSkip: false,
                maxRotation: 0,
                callback(this: Scale, value: string | number) {
                  const v = Number(value);
                  const shown = logTicks(Math.log10(this.min), Math.log10(this.max));
                  return shown.some((t) => Math.abs(t - v) <= t * 1e-9) ? logTickLabel(v) : '';
                },
              },
            }
          : { type: 'linear', ...axis(axes.x) },
        y: { min: axes.yMin, max: axes.yMax, ...axis(axes.y) },
      },
      plugins: {
        legend: { labels: { color: cssVar('--text'), boxWidth: 14 } },
        tooltip: tooltips ? { intersect: false, mode: 'index' } : { enabled: false },
        // Long traces: min/max per pixel column keeps every excursion and draws a few hundred points.
        decimation: { enabled: true, algorithm: 'min-max' },
        // Time axis zoom: drag a range (or Ctrl + wheel, or pinch), Shift + drag pans; see resetZoom.
        zoom: {
          zoom: {
            drag: { enabled: onZoom !== undefined },
            wheel: { enabled: onZoom !== undefined, modifierKey: 'ctrl' },
            pinch: { enabled: onZoom !== undefined },
            mode: 'x',
            onZoomComplete: () => onZoom?.(),
          },
          pan: { enabled: onZoom !== undefined, mode: 'x', modifierKey: 'shift', onPanComplete: () => onZoom?.() },
        },
      },
    },
  });
}

/** Replaces the datasets' points and redraws without animation. */
export function setChartData(chart: Chart<'line', Points>, data: Points[]): void {
  data.forEach((points, i) => (chart.data.datasets[i].data = points));
  chart.update('none');
}

/**
 * Chart redraws share the animation frames: at most one chart draws per frame (first come, first
 * served), so two charts never add up to one long task. A chart asks again when its data changed.
 */
const pending: Array<() => void> = [];
let frameRequested = false;

function drawOne(): void {
  frameRequested = false;
  pending.shift()?.();
  if (pending.length > 0) {
    frameRequested = true;
    requestAnimationFrame(drawOne);
  }
}

export function requestChartDraw(draw: () => void): void {
  if (pending.includes(draw)) return;
  pending.push(draw);
  if (!frameRequested) {
    frameRequested = true;
    requestAnimationFrame(drawOne);
  }
}
