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
} from 'chart.js';

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
  axes: { x: string; y?: string; yMin: number; yMax: number; xLogarithmic?: boolean },
  tooltips: boolean,
): Chart<'line', Points> {
  const axis = (title: string | undefined) => ({
    title: { display: title !== undefined, text: title ?? '', color: cssVar('--muted') },
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
        x: { type: axes.xLogarithmic ? 'logarithmic' : 'linear', ...axis(axes.x) },
        y: { min: axes.yMin, max: axes.yMax, ...axis(axes.y) },
      },
      plugins: {
        legend: { labels: { color: cssVar('--text'), boxWidth: 14 } },
        tooltip: tooltips ? { intersect: false, mode: 'index' } : { enabled: false },
        // Long traces: min/max per pixel column keeps every excursion and draws a few hundred points.
        decimation: { enabled: true, algorithm: 'min-max' },
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
