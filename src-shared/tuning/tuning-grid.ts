import { KnobError } from '../errors';
import type { TuningPoint } from './tuning-objective';
import type { TuningRequest } from './tuning-search';

/**
 * The tuner's coarse grid (tuning-search.ts runs the search): log-spaced zeta and wn over the
 * request's ranges, cut to its `within` bounds (the desk's knob ranges), for every variant, mode,
 * reset horizon and temperature asked for.
 */
function logSpaced(min: number, max: number, points: number): number[] {
  if (points === 1) return [Math.sqrt(min * max)];
  // the ends exactly (a bound's max, not one ulp past it)
  return Array.from({ length: points }, (_, i) => (i === points - 1 ? max : min * (max / min) ** (i / (points - 1))));
}

/** The wn grid's top: 0.8 of Nyquist (rad/s), at most 60, unless given. */
export function wnGridMax(request: TuningRequest, hSeconds: number): number {
  return request.wnRadPerSec.max ?? Math.min(60, (0.8 * Math.PI) / hSeconds);
}

/**
 * The zeta and wn ranges the grid spans and the search stays in: the request's (wn's top by
 * wnGridMax), cut to its `within` bounds.
 */
export function searchRanges(
  request: TuningRequest,
  hSeconds: number,
): { zeta: [number, number]; wn: [number, number] } {
  const cut = (name: string, min: number, max: number, bound: { min: number; max: number } | undefined) => {
    const range: [number, number] =
      bound === undefined ? [min, max] : [Math.max(min, bound.min), Math.min(max, bound.max)];
    if (range[0] > range[1])
      throw new KnobError(
        'INVALID_SETTINGS',
        bound === undefined
          ? `Invalid tuning request: ${name} min ${min} is above its max ${max}`
          : `Invalid tuning request: the ${name} grid [${min}, ${max}] lies outside the bounds [${bound.min}, ${bound.max}]`,
      );
    return range;
  };
  return {
    zeta: cut('zeta', request.zeta.min, request.zeta.max, request.within?.zeta),
    wn: cut('wn', request.wnRadPerSec.min, wnGridMax(request, hSeconds), request.within?.wnRadPerSec),
  };
}

/** The coarse grid's points (zeta-major within each variant, mode, horizon and temperature). */
export function tuningGrid(request: TuningRequest, current: TuningPoint, hSeconds: number): TuningPoint[] {
  const ranges = searchRanges(request, hSeconds);
  const zetas = logSpaced(ranges.zeta[0], ranges.zeta[1], request.zeta.points);
  const wns = logSpaced(ranges.wn[0], ranges.wn[1], request.wnRadPerSec.points);
  const base = current.settings;
  const points: TuningPoint[] = [];
  for (const variant of request.variants ?? [base.variant])
    for (const mode of request.modes ?? [base.mode])
      for (const tauSeconds of mode === 'reset' ? (request.tauSeconds ?? [base.tauSeconds]) : [base.tauSeconds])
        for (const temperature of request.temperatures ?? [current.temperature]) {
          const settings = { ...base, variant, mode, tauSeconds };
          if (variant === 'instant') points.push({ settings, temperature });
          else if (variant === 'ema')
            for (const wnRadPerSec of wns) points.push({ settings: { ...settings, wnRadPerSec }, temperature });
          else
            for (const zeta of zetas)
              for (const wnRadPerSec of wns) points.push({ settings: { ...settings, zeta, wnRadPerSec }, temperature });
        }
  return points;
}
