import type { FrequencyProbeResult } from '../probes/frequency-probe';
import type { StepProbeResult } from '../probes/step-probe';
import { linePlotSvg, type LineSeries } from './line-plot';
import type { FigurePalette } from './svg-style';

/**
 * The probes' figures (issue 17), drawn by the desk's Probes tab and the probe report alike: the
 * step probe's normalised mean response with its bootstrap band over the discrete prediction, and
 * the frequency probe's measured magnitudes over the discrete theory curve (a Bode magnitude plot).
 */
export function stepProbePlotSvg(
  result: StepProbeResult,
  options: { width?: number; palette?: FigurePalette } = {},
): string {
  const { summary, stepFrame, hSeconds } = result;
  const t = Float64Array.from(summary.normalised, (_, i) => (i - stepFrame) * hSeconds);
  const band = summary.bootstrap.band === 'simultaneous' ? 'simultaneous' : 'pointwise';
  const level = Math.round(summary.bootstrap.level * 100);
  const series: LineSeries[] = [
    { label: 'discrete prediction', role: 'target', x: t, y: summary.predicted },
    { label: `measured mean (R = ${summary.realisations})`, role: 'dynamic', x: t, y: summary.normalised },
  ];
  let yMin = -0.2;
  let yMax = 1.2;
  for (const v of summary.bandHi) if (Number.isFinite(v)) yMax = Math.max(yMax, v);
  for (const v of summary.bandLo) if (Number.isFinite(v)) yMin = Math.min(yMin, v);
  return linePlotSvg({
    series,
    bands: [{ label: `${level} % ${band} bootstrap band`, x: t, lo: summary.bandLo, hi: summary.bandHi }],
    xLabel: 'time since the step (s)',
    yLabel: 'g step, normalised by the mean u* step',
    yMin,
    yMax: Math.min(yMax, 3),
    width: options.width ?? 900,
    height: 300,
    label: 'Step probe: normalised mean gate response, its bootstrap band and the discrete prediction',
    footnotes: [
      `${summary.frames} frames of ${summary.realisations} realisations; inside the band at ${(100 * summary.insideFraction).toFixed(1)} % of the frames from the step on`,
    ],
    palette: options.palette,
  });
}

export function bodeProbePlotSvg(
  result: FrequencyProbeResult,
  options: { width?: number; palette?: FigurePalette } = {},
): string {
  const theoryHz = Float64Array.from(result.theoryCurve.wRadPerSec, (w) => w / (2 * Math.PI));
  const unclipped = result.points.filter((p) => !p.clipped);
  const clipped = result.points.filter((p) => p.clipped);
  const values = [...result.theoryCurve.magnitudeDb, ...result.points.map((p) => p.measured.magnitudeDb)].filter(
    Number.isFinite,
  );
  const series: LineSeries[] = [
    {
      label: `discrete theory (${result.settings.discretization})`,
      role: 'target',
      x: theoryHz,
      y: result.theoryCurve.magnitudeDb,
    },
    {
      label: 'measured (lock-in)',
      role: 'dynamic',
      x: unclipped.map((p) => p.frequencyHz),
      y: unclipped.map((p) => p.measured.magnitudeDb),
    },
  ];
  if (clipped.length > 0)
    series.push({
      label: 'clipped (non-linear)',
      role: 'static',
      x: clipped.map((p) => p.frequencyHz),
      y: clipped.map((p) => p.measured.magnitudeDb),
    });
  return linePlotSvg({
    series,
    xLabel: 'modulation frequency (Hz)',
    yLabel: 'magnitude of g / u* (dB re DC)',
    yMin: Math.floor(Math.min(-6, ...values) / 6) * 6,
    yMax: Math.ceil(Math.max(3, ...values) / 3) * 3,
    xLog: true,
    width: options.width ?? 900,
    height: 300,
    label: 'Frequency probe: measured magnitude against the discrete theory',
    footnotes: [
      `lock-in estimates with batch-means standard errors; ${result.points.length} frequencies, whole periods, transient discarded`,
    ],
    palette: options.palette,
  });
}
