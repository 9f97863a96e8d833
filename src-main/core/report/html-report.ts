import type { ReliabilityDiagram } from '../../../src-shared/metrics/reliability';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';

/**
 * A self-contained HTML report of a run (no scripts, no external files): the gate g(t) against
 * u*(t) over the corruption severity, the reliability diagram of the fused output, and every metric
 * with its identity. Long series are decimated to min/max pairs per pixel column, so the plot keeps
 * every excursion while the file stays small.
 */
export interface ReportInput {
  title: string;
  subtitle: string;
  /** A banner saying the run stopped part-way, and why; null for a complete run. */
  partial: string | null;
  timestampsSeconds: Float64Array;
  g: Float64Array;
  uRef: Float32Array;
  severity: Float64Array | null;
  reliability: ReliabilityDiagram | null;
  metrics: MetricValue[];
  facts: Array<[string, string]>;
}

const WIDTH = 900;
const HEIGHT = 260;
const PAD = 40;

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Min/max decimation to at most 2 points per pixel column. */
function decimate(t: Float64Array, y: ArrayLike<number>, columns: number): Array<[number, number]> {
  const n = t.length;
  if (n <= 2 * columns) return Array.from({ length: n }, (_, i) => [t[i], y[i]]);
  const out: Array<[number, number]> = [];
  const per = n / columns;
  for (let c = 0; c < columns; c++) {
    const from = Math.floor(c * per);
    const to = Math.min(n, Math.floor((c + 1) * per));
    let lo = from;
    let hi = from;
    for (let i = from; i < to; i++) {
      if (y[i] < y[lo]) lo = i;
      if (y[i] > y[hi]) hi = i;
    }
    for (const i of lo < hi ? [lo, hi] : [hi, lo]) out.push([t[i], y[i]]);
  }
  return out;
}

function polyline(
  points: Array<[number, number]>,
  x: (v: number) => number,
  y: (v: number) => number,
  colour: string,
  width = 1.5,
): string {
  const d = points.map(([a, b]) => `${x(a).toFixed(1)},${y(b).toFixed(1)}`).join(' ');
  return `<polyline fill="none" stroke="${colour}" stroke-width="${width}" points="${d}"/>`;
}

function gatePlot(input: ReportInput): string {
  const t = input.timestampsSeconds;
  if (t.length === 0) return '<p>No frames.</p>';
  const t0 = t[0];
  const t1 = t[t.length - 1] > t0 ? t[t.length - 1] : t0 + 1;
  const x = (v: number) => PAD + ((v - t0) / (t1 - t0)) * (WIDTH - 2 * PAD);
  const y = (v: number) => HEIGHT - PAD - Math.min(1.2, Math.max(-0.2, v)) * ((HEIGHT - 2 * PAD) / 1.2);
  const columns = WIDTH - 2 * PAD;
  const severity = input.severity
    ? polyline(
        decimate(
          t,
          Array.from(input.severity, (s) => s / 5),
          columns,
        ),
        x,
        y,
        '#d9c7a0',
        6,
      )
    : '';
  const ticks = [0, 0.5, 1]
    .map(
      (v) =>
        `<text x="${PAD - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text><line x1="${PAD}" x2="${WIDTH - PAD}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
    )
    .join('');
  return `<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="gate g(t) and target u*(t)">
${ticks}${severity}
${polyline(decimate(t, input.uRef, columns), x, y, '#7a9cc6', 1)}
${polyline(decimate(t, input.g, columns), x, y, '#c0392b', 1.8)}
<text x="${PAD}" y="${HEIGHT - 10}">${t0.toFixed(2)} s</text><text x="${WIDTH - PAD}" y="${HEIGHT - 10}" text-anchor="end">${t1.toFixed(2)} s</text>
</svg>
<p class="legend"><span style="color:#c0392b">━ g(t) gate</span> <span style="color:#7a9cc6">━ u*(t) target</span>${input.severity ? ' <span style="color:#b59b62">▬ severity / 5</span>' : ''}</p>`;
}

function reliabilityPlot(diagram: ReliabilityDiagram): string {
  const size = 320;
  const s = (v: number) => PAD + v * (size - 2 * PAD);
  const bars = diagram.bins
    .filter((b) => b.count > 0 && b.accuracy !== null)
    .map((b) => {
      const top = size - s(b.accuracy!);
      return `<rect x="${s(b.lo).toFixed(1)}" y="${top.toFixed(1)}" width="${Math.max(1, s(b.hi) - s(b.lo) - 1).toFixed(1)}" height="${(size - PAD - top).toFixed(1)}" fill="#7a9cc6"><title>[${b.lo.toFixed(3)}, ${b.hi.toFixed(3)}]: n ${b.count}, accuracy ${b.accuracy!.toFixed(3)}, mean confidence ${b.meanConfidence!.toFixed(3)}</title></rect>`;
    })
    .join('');
  return `<svg viewBox="0 0 ${size} ${size}" width="${size}" role="img" aria-label="reliability diagram">
<line x1="${PAD}" y1="${size - PAD}" x2="${size - PAD}" y2="${PAD}" stroke="#999" stroke-dasharray="4"/>${bars}
<text x="${size / 2}" y="${size - 8}" text-anchor="middle">confidence</text><text x="12" y="${size / 2}" transform="rotate(-90 12 ${size / 2})" text-anchor="middle">accuracy</text>
</svg><p>${escape(diagram.identity)}</p>`;
}

export function htmlReport(input: ReportInput): string {
  const rows = input.metrics
    .map(
      (m) =>
        `<tr><td>${escape(m.name)}</td><td class="num">${Number.isFinite(m.value) ? m.value.toPrecision(6) : escape(String(m.value))}</td><td>${escape(m.identity)}${m.approximation ? ` <em>(${escape(m.approximation)})</em>` : ''}</td></tr>`,
    )
    .join('\n');
  const facts = input.facts.map(([k, v]) => `<tr><th>${escape(k)}</th><td>${escape(v)}</td></tr>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(input.title)}</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<style>body{font:14px system-ui,sans-serif;margin:2em auto;max-width:960px;color:#222}svg{width:100%;height:auto;font-size:11px}
table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left}.num{text-align:right;font-variant-numeric:tabular-nums}.legend span{margin-right:1.5em}.partial{padding:.5em 1em;border:2px solid #b3261e;color:#b3261e;font-weight:600}</style>
</head><body>
<h1>${escape(input.title)}</h1><p>${escape(input.subtitle)}</p>
${input.partial === null ? '' : `<p class="partial" role="alert">${escape(input.partial)}</p>`}
<table>${facts}</table>
<h2>Gate and target</h2>${gatePlot(input)}
<h2>Reliability of the fused output</h2>${input.reliability ? reliabilityPlot(input.reliability) : '<p>No labelled frames: no reliability diagram.</p>'}
<h2>Metrics</h2>${input.metrics.length ? `<table><tr><th>metric</th><th>value</th><th>identity</th></tr>\n${rows}</table>` : '<p>No labelled frames: no calibration metrics.</p>'}
</body></html>
`;
}
