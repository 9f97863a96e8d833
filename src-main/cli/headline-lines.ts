import type { HeadlineFigure } from '../../src-shared/metrics/headline-intervals';

/** The headline figures with their intervals, one line each, as `--intervals` prints them. */
export function headlineLines(figures: HeadlineFigure[]): string[] {
  if (figures.length === 0) return ['no labelled frames: no headline figures'];
  return [
    `headline figures, ${figures[0].method}:`,
    ...figures.map(
      (h) => `${h.value.toPrecision(6).padStart(12)}  [${h.lo.toPrecision(4)}, ${h.hi.toPrecision(4)}]  ${h.identity}`,
    ),
  ];
}
