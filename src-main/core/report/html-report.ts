import { formatMetricValue } from '../../../src-shared/metrics/metric-format';
import type { HeadlineFigure } from '../../../src-shared/metrics/headline-intervals';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';
import {
  smoothCurveArrays,
  type ReliabilityDiagram,
  type SmoothReliabilityCurve,
} from '../../../src-shared/metrics/reliability';
import { linePlotSvg } from '../../../src-shared/plots/line-plot';
import { reliabilityPlotSvg } from '../../../src-shared/plots/reliability-plot';
import { tcePlotSvg } from '../../../src-shared/plots/tce-plot';
import type { TceResult } from '../../../src-shared/metrics/test-based-calibration-error';
import type { L2CalibrationErrorInterval } from '../../../src-shared/metrics/calibration-error-interval';
import type { BootstrapInterval } from '../../../src-shared/metrics/bootstrap';
import { escapeXml } from '../../../src-shared/plots/svg';
import type { CalibrationTimelineResult } from '../../../src-shared/drift/calibration-timeline';
import type { OutputFile } from '../files/output-files';
import { figureBlock, htmlDocument, reportPageFiles, type ReportFigure } from './html-document';
import { provenanceRows, type Provenance } from './provenance';

/**
 * The one report of a run, used by the CLI (knob run, knob replay) and the desk's export alike: the
 * same content in the same order: a partial-run banner when the run stopped part-way; the
 * provenance rows; the gate and its target over time with the corruption severity behind (time
 * ticks, min/max decimation); the reliability diagram of the fused output (numeric ticks, bin
 * counts, Wilson whiskers, the smooth curve where the data support it); the headline figures with
 * their bootstrap intervals; every metric with its identity. Self-contained HTML (no script, no
 * external resource) that prints well, with each figure also written beside it as SVG and PNG.
 */
export interface ReportInput {
  title: string;
  partial: string | null;
  provenance: Provenance;
  timestampsSeconds: Float64Array;
  g: Float64Array;
  uRef: Float32Array;
  severity: Float64Array | null;
  reliability: ReliabilityDiagram | null;
  smooth: SmoothReliabilityCurve | null;
  histogram: { edges: Float64Array; counts: Float64Array } | null;
  /** TCE of the fused output with its bins, for its own view (null when not computed). */
  tce: TceResult | null;
  /** The debiased L2-CE (U-statistic) with its asymptotic and bootstrap intervals. */
  l2CeIntervals: { asymptotic: L2CalibrationErrorInterval; bootstrap: BootstrapInterval } | null;
  /** The headline figures with their intervals (empty when nothing is labelled). */
  headline: HeadlineFigure[];
  metrics: MetricValue[];
  /** Calibration over time of the fused output, by window, with its change points (null: not drawn). */
  overTime: CalibrationTimelineResult | null;
}

export type { ReportFigure };

export function reportFigures(input: ReportInput): ReportFigure[] {
  const figures: ReportFigure[] = [];
  if (input.timestampsSeconds.length > 0) {
    const t = input.timestampsSeconds;
    const series = [
      ...(input.severity
        ? [
            {
              label: 'severity / 5',
              role: 'severity' as const,
              x: t,
              y: Array.from(input.severity, (s) => s / 5),
              area: true,
            },
          ]
        : []),
      { label: 'u*(t) target', role: 'target' as const, x: t, y: input.uRef },
      { label: 'g(t) gate', role: 'dynamic' as const, x: t, y: input.g },
    ];
    figures.push({
      name: 'gate',
      caption:
        'The gate g(t) against its target u*(t), with the corruption severity (divided by 5) behind, over stream time.',
      svg: linePlotSvg({
        series,
        xLabel: 'stream time (s)',
        yLabel: 'gate g, target u*, severity / 5',
        yMin: -0.1,
        yMax: 1.1,
        width: 900,
        height: 280,
        label: 'Gate g(t), target u*(t) and corruption severity over stream time',
      }),
    });
  }
  const overTime = input.overTime;
  if (overTime !== null) figures.push(overTimeFigure(overTime));
  if (input.reliability) {
    const smooth = input.smooth;
    const histogram = input.histogram;
    figures.push({
      name: 'reliability',
      caption: `${input.reliability.identity}; whiskers: Wilson 95 % intervals${smooth ? `; line: ${smooth.identity} (drawn where at least 3 samples support it, faded below 10)` : ''}; strip: samples per confidence bin.`,
      svg: reliabilityPlotSvg({
        identity: input.reliability.identity,
        bins: input.reliability.bins,
        smooth: smooth === null ? null : smoothCurveArrays(smooth),
        histogram:
          histogram === null
            ? null
            : {
                identity: 'confidence histogram',
                edges: Array.from(histogram.edges),
                counts: Array.from(histogram.counts),
              },
        width: 420,
        footnotes: [input.reliability.identity],
      }),
    });
  }
  if (input.tce) {
    figures.push({
      name: 'tce',
      caption: `${input.tce.identity}. Boxes: the quartiles of each bin's predictions, whiskers to the extremes, tick at the mean; bar: the bin's empirical probability; strip: bin sizes with the predictions the test rejected filled in.`,
      svg: tcePlotSvg({ ...input.tce, width: 420, footnotes: [input.tce.identity] }),
    });
  }
  return figures;
}

/** The over-time figure's lines: accuracy and ECE at each window's middle, with their intervals as bands. */
const OVER_TIME_LINES = [
  { metric: 'accuracy', label: 'accuracy', role: 'dynamic' as const },
  { metric: 'ece', label: 'ECE', role: 'static' as const },
];

function overTimeFigure(overTime: CalibrationTimelineResult): ReportFigure {
  const mid = (w: { firstFrame: number; endFrame: number }, i: number) =>
    overTime.windowSeconds[i]! + (w.endFrame - w.firstFrame) / overTime.framesPerSecond / 2;
  const lines = OVER_TIME_LINES.map((line) => {
    const m = (Object.keys(overTime.metrics) as string[]).indexOf(line.metric);
    const points = overTime.windows.flatMap((w, i) => {
      const v = w.values[m];
      return v === null || v === undefined ? [] : [{ x: mid(w, i), ...v }];
    });
    return { line, points };
  });
  const changes = overTime.changePoints.map(
    (c, i) =>
      `frame ${c.frame} (${overTime.changePointSeconds[i]!.toFixed(1)} s): accuracy ${c.accuracyBefore.toFixed(3)} -> ${c.accuracyAfter.toFixed(3)}, p = ${c.pValue.toFixed(3)}`,
  );
  return {
    name: 'over-time',
    caption: `Accuracy and ${overTime.metrics.ece} of the fused output over windows of ${overTime.windowFrames} frames, each on the window's labelled frames with a 95 % moving-block bootstrap interval (bands). Change points of accuracy (${overTime.changePointMethod}): ${changes.length === 0 ? 'none' : changes.join('; ')}.`,
    svg: linePlotSvg({
      series: lines.map(({ line, points }) => ({
        label: line.label,
        role: line.role,
        x: points.map((p) => p.x),
        y: points.map((p) => p.value),
      })),
      bands: lines.map(({ line, points }) => ({
        label: `${line.label} 95 % interval`,
        x: points.map((p) => p.x),
        lo: points.map((p) => p.low),
        hi: points.map((p) => p.high),
      })),
      xLabel: 'stream time (s)',
      yLabel: 'accuracy, ECE',
      yMin: 0,
      yMax: 1,
      width: 900,
      height: 240,
      label: 'Accuracy and ECE of the fused output over stream time, by window',
    }),
  };
}

/** Figures keep their drawn size and scale down to a narrower page or print, never up. */
export function htmlReport(input: ReportInput, figures: ReportFigure[]): string {
  const provenance = provenanceRows(input.provenance)
    .map(([k, v]) => `<tr><th scope="row">${escapeXml(k)}</th><td>${escapeXml(v)}</td></tr>`)
    .join('');
  const headlineRow = (name: string, identity: string, value: number, lo: number, hi: number, method: string) =>
    `<tr><th scope="row">${escapeXml(name)}</th><td class="num">${formatMetricValue(identity, value)}</td><td class="num">${formatMetricValue(identity, lo)} to ${formatMetricValue(identity, hi)}</td><td>${escapeXml(identity)}; interval: ${escapeXml(method)}</td></tr>`;
  const l2 = input.l2CeIntervals;
  const headline = [
    ...input.headline.map((h) => headlineRow(h.name, h.identity, h.value, h.lo, h.hi, h.method)),
    ...(l2 === null
      ? []
      : [
          headlineRow(
            'debiased L2-CE',
            l2.asymptotic.valueIdentity,
            l2.asymptotic.estimate,
            l2.asymptotic.lo,
            l2.asymptotic.hi,
            `${l2.asymptotic.identity} (${l2.asymptotic.regime} regime)`,
          ),
          headlineRow(
            'debiased L2-CE',
            l2.asymptotic.valueIdentity,
            l2.asymptotic.estimate,
            l2.bootstrap.lo,
            l2.bootstrap.hi,
            l2.bootstrap.identity,
          ),
        ]),
  ].join('');
  const metrics = input.metrics
    .map(
      (m) =>
        `<tr><td>${escapeXml(m.name)}</td><td class="num">${formatMetricValue(m.identity, m.value)}</td><td>${escapeXml(m.identity)}${m.approximation ? ` <em>(${escapeXml(m.approximation)})</em>` : ''}</td></tr>`,
    )
    .join('\n');
  const figure = (name: string, heading: string, empty: string): string => {
    const found = figures.find((f) => f.name === name);
    return `<h2>${heading}</h2>${found ? figureBlock(found) : `<p>${empty}</p>`}`;
  };
  return htmlDocument(
    input.title,
    `${input.partial === null ? '' : `<p class="partial" role="alert">${escapeXml(input.partial)}</p>`}
<h2>Provenance</h2>
<table class="provenance">${provenance}</table>
${figure('gate', 'Gate and target', 'No frames.')}
${figure('over-time', 'Calibration over time', 'Not drawn: fewer than two windows of a minute with enough labelled frames.')}
${figure('reliability', 'Reliability of the fused output', 'No labelled frames: no reliability diagram.')}
${figure('tce', 'TCE view of the fused output', 'TCE not computed for this run (10 labelled frames or fewer, or more than its per-prediction tests allow).')}
<h2>Headline figures</h2>${input.headline.length ? `<table><tr><th>figure</th><th>value</th><th>95 % interval</th><th>identity</th></tr>${headline}</table>` : '<p>No labelled frames: no calibration figures.</p>'}
<h2>Every metric</h2>${input.metrics.length ? `<table><tr><th>metric</th><th>value</th><th>identity</th></tr>\n${metrics}</table>` : '<p>No labelled frames: no calibration metrics.</p>'}`,
  );
}

/** report.html and its figures as SVG and PNG, as files to write with a run's other outputs. */
export function reportFiles(input: ReportInput): OutputFile[] {
  const figures = reportFigures(input);
  return reportPageFiles(htmlReport(input, figures), figures);
}
