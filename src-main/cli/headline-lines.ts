import type { HeadlineFigure } from '../../src-shared/metrics/headline-intervals';
import { formatIntervalOutward } from '../../src-shared/metrics/metric-format';
import { unavailableText, type MetricValue } from '../../src-shared/metrics/metric-value';

/**
 * The headline figures with their intervals, one line each, as `--intervals` prints them: each
 * figure's interval says its own method (they differ: Wilson for accuracy, bootstrap for the rest),
 * and a figure whose interval does not contain it says why.
 */
export function headlineLines(figures: HeadlineFigure[]): string[] {
  if (figures.length === 0) return ['no labelled frames: no headline figures'];
  return [
    'headline figures with 95 % intervals:',
    ...figures.flatMap((h) => [
      `${h.value.toPrecision(6).padStart(12)}  ${formatIntervalOutward(h.lo, h.hi)}  ${h.identity}`,
      `${''.padStart(12)}  interval: ${h.method}`,
      ...(h.note === undefined ? [] : [`${''.padStart(12)}  note: ${h.note}`]),
    ]),
  ];
}

/** One line naming the metrics that need more frames than there are (none: no line). */
export function notComputedLines(metrics: MetricValue[]): string[] {
  const short = metrics.filter((m) => m.unavailable !== undefined);
  if (short.length === 0) return [];
  return [
    `not computed (${short.length}): ${short.map((m) => `${m.identity} — ${unavailableText(m.unavailable!)}`).join('; ')}`,
  ];
}
