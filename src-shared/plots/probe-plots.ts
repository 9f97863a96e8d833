import { levelPercent } from '../metrics/bootstrap';
import type { FrequencyProbeResult } from '../probes/frequency-probe';
import type { StepProbeResult } from '../probes/step-probe';
import { linePlotSvg, type LineSeries } from './line-plot';
import type { FigurePalette } from './svg-style';

/**
 * The probes' figures (issue 17), drawn by the desk's Probes tab and the probe report alike: the
 * step probe's normalised mean response with its bootstrap band over the discrete prediction, and
 * the frequency probe's measured magnitudes over the discrete theory curve (a Bode magnitude plot).
 */
/** What the step probe's figure draws (the desk gets it through the API, the CLI from the result). */
export interface StepProbeFigure {
  /** Seconds since the step, per frame of the window. */
  tSeconds: ArrayLike<number>;
  measured: ArrayLike<number>;
  predicted: ArrayLike<number>;
  bandLo: ArrayLike<number>;
  bandHi: ArrayLike<number>;
  /** g itself over the realisations (not normalised): mean, median, quartiles, and the mean u*. */
  meanG: ArrayLike<number>;
  medianG: ArrayLike<number>;
  q25G: ArrayLike<number>;
  q75G: ArrayLike<number>;
  meanUStar: ArrayLike<number>;
  realisations: number;
  /** "95 % simultaneous bootstrap band". */
  bandLabel: string;
  insideFraction: number;
}

export function stepProbeFigure(result: StepProbeResult): StepProbeFigure {
  const { summary, stepFrame, hSeconds } = result;
  return {
    tSeconds: Float64Array.from(summary.normalised, (_, i) => (i - stepFrame) * hSeconds),
    measured: summary.normalised,
    predicted: summary.predicted,
    bandLo: summary.bandLo,
    bandHi: summary.bandHi,
    meanG: summary.meanG,
    medianG: summary.medianG,
    q25G: summary.q25G,
    q75G: summary.q75G,
    meanUStar: summary.meanUStar,
    realisations: summary.realisations,
    bandLabel: `${levelPercent(summary.bootstrap.level)} ${summary.bootstrap.band} bootstrap band`,
    insideFraction: summary.insideFraction,
  };
}

export function stepProbePlotSvg(
  figure: StepProbeFigure,
  options: { width?: number; palette?: FigurePalette } = {},
): string {
  const t = figure.tSeconds;
  const series: LineSeries[] = [
    { label: 'discrete prediction', role: 'target', x: t, y: figure.predicted },
    { label: `measured mean (R = ${figure.realisations})`, role: 'dynamic', x: t, y: figure.measured },
  ];
  let yMin = -0.2;
  let yMax = 1.2;
  for (let i = 0; i < figure.bandHi.length; i++) {
    if (Number.isFinite(figure.bandHi[i])) yMax = Math.max(yMax, figure.bandHi[i]!);
    if (Number.isFinite(figure.bandLo[i])) yMin = Math.min(yMin, figure.bandLo[i]!);
  }
  return linePlotSvg({
    series,
    bands: [{ label: figure.bandLabel, x: t, lo: figure.bandLo, hi: figure.bandHi }],
    xLabel: 'time since the step (s)',
    yLabel: 'g step, normalised by the mean u* step',
    yMin,
    yMax: Math.min(yMax, 3),
    width: options.width ?? 900,
    height: 300,
    label: 'Step probe: normalised mean gate response, its bootstrap band and the discrete prediction',
    footnotes: [
      `${t.length} frames of ${figure.realisations} realisations; inside the band at ${(100 * figure.insideFraction).toFixed(1)} % of the frames from the step on`,
    ],
    palette: options.palette,
  });
}

/** g over the realisations as recorded: mean and median, the inter-quartile band, and the mean u*. */
export function stepProbeRawPlotSvg(
  figure: StepProbeFigure,
  options: { width?: number; palette?: FigurePalette } = {},
): string {
  const t = figure.tSeconds;
  return linePlotSvg({
    series: [
      { label: 'mean u*(t)', role: 'target', x: t, y: figure.meanUStar },
      { label: 'median g(t)', role: 'static', x: t, y: figure.medianG },
      { label: 'mean g(t)', role: 'dynamic', x: t, y: figure.meanG },
    ],
    bands: [{ label: 'g inter-quartile range', x: t, lo: figure.q25G, hi: figure.q75G }],
    xLabel: 'time since the step (s)',
    yLabel: 'gate g, target u*',
    yMin: -0.1,
    yMax: 1.1,
    width: options.width ?? 900,
    height: 260,
    label: 'Step probe: the gate over the realisations (mean, median, inter-quartile range) and the mean target',
    footnotes: [`${figure.realisations} realisations; quartiles and median per frame across realisations`],
    palette: options.palette,
  });
}

/** What the Bode figure draws (the desk gets it through the API, the CLI from the result). */
export interface BodeProbeFigure {
  points: Array<{ frequencyHz: number; magnitudeDb: number; clipped: boolean }>;
  theoryHz: ArrayLike<number>;
  theoryDb: ArrayLike<number>;
  discretization: string;
}

export function bodeProbeFigure(result: FrequencyProbeResult): BodeProbeFigure {
  return {
    points: result.points.map((p) => ({
      frequencyHz: p.frequencyHz,
      magnitudeDb: p.measured.magnitudeDb,
      clipped: p.clipped,
    })),
    theoryHz: Float64Array.from(result.theoryCurve.wRadPerSec, (w) => w / (2 * Math.PI)),
    theoryDb: result.theoryCurve.magnitudeDb,
    discretization: result.settings.discretization,
  };
}

export function bodeProbePlotSvg(
  figure: BodeProbeFigure,
  options: { width?: number; palette?: FigurePalette } = {},
): string {
  const unclipped = figure.points.filter((p) => !p.clipped);
  const clipped = figure.points.filter((p) => p.clipped);
  const values = [...Array.from(figure.theoryDb), ...figure.points.map((p) => p.magnitudeDb)].filter(Number.isFinite);
  const series: LineSeries[] = [
    { label: `discrete theory (${figure.discretization})`, role: 'target', x: figure.theoryHz, y: figure.theoryDb },
    {
      label: 'measured (lock-in)',
      role: 'dynamic',
      x: unclipped.map((p) => p.frequencyHz),
      y: unclipped.map((p) => p.magnitudeDb),
    },
  ];
  if (clipped.length > 0)
    series.push({
      label: 'clipped (non-linear)',
      role: 'static',
      x: clipped.map((p) => p.frequencyHz),
      y: clipped.map((p) => p.magnitudeDb),
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
      `lock-in estimates with batch-means standard errors; ${figure.points.length} frequencies, whole periods, transient discarded`,
    ],
    palette: options.palette,
  });
}
