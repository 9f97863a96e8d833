import type { TuningPoint } from './tuning-objective';
import { searchRanges } from './tuning-grid';
import type { TuningCandidate, TuningRequest } from './tuning-search';

/**
 * The tuner's local refinement (tuning-search.ts, step 2): a 7 x 7 grid at a quarter of the coarse
 * grid's spacing around a point, and a compass search in (log zeta, log wn), both within the
 * searched ranges.
 */
/** The coarse grid's spacing in log zeta and log wn, and the ranges the search stays in. */
export interface GridSteps {
  logZeta: number;
  logWn: number;
  zeta: [number, number];
  wn: [number, number];
}

export function gridSteps(request: TuningRequest, hSeconds: number): GridSteps {
  const spacing = (min: number, max: number, points: number) => (points > 1 ? Math.log(max / min) / (points - 1) : 0.5);
  const { zeta, wn } = searchRanges(request, hSeconds);
  return {
    logZeta: spacing(zeta[0], zeta[1], request.zeta.points),
    logWn: spacing(wn[0], wn[1], request.wnRadPerSec.points),
    zeta,
    wn,
  };
}

/** `point` moved by (dz, dw) steps in log zeta and log wn, kept within the searched ranges. */
function moved(point: TuningPoint, steps: GridSteps, dz: number, dw: number): TuningPoint {
  const { settings, temperature } = point;
  const within = (value: number, [min, max]: [number, number]) => Math.min(max, Math.max(min, value));
  const zeta = within(settings.zeta * Math.exp(dz * steps.logZeta), steps.zeta);
  const wnRadPerSec = within(settings.wnRadPerSec * Math.exp(dw * steps.logWn), steps.wn);
  return { settings: { ...settings, zeta, wnRadPerSec }, temperature };
}

/** The 7 x 7 local grid at a quarter of the spacing around `point` (7 along wn for ema), less its centre. */
export function zoomPoints(point: TuningPoint, steps: GridSteps): TuningPoint[] {
  const offsets = [-0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75];
  const secondOrder = point.settings.variant === 'second-order';
  const out: TuningPoint[] = [];
  for (const dz of secondOrder ? offsets : [0])
    for (const dw of offsets) if (dz !== 0 || dw !== 0) out.push(moved(point, steps, dz, dw));
  return out;
}

/**
 * Compass search in (log zeta, log wn) from `start`: its step starts at a quarter of the grid's
 * spacing, doubles (up to the spacing) after a move and halves when no neighbour improves, down to
 * 1/64 of the spacing, for at most COMPASS_ROUNDS rounds. Returns the accepted steps.
 */
const COMPASS_ROUNDS = 40;

export async function compassFrom(
  start: TuningCandidate,
  steps: GridSteps,
  run: (points: TuningPoint[], stage: TuningCandidate['stage']) => Promise<TuningCandidate[]>,
): Promise<TuningCandidate[]> {
  const secondOrder = start.point.settings.variant === 'second-order';
  const accepted: TuningCandidate[] = [];
  let here = start;
  let scale = 1 / 4;
  for (let round = 0; round < COMPASS_ROUNDS && scale >= 1 / 64; round++) {
    const neighbours: TuningPoint[] = [];
    for (const dz of secondOrder ? [-1, 0, 1] : [0])
      for (const dw of [-1, 0, 1])
        if (dz !== 0 || dw !== 0) neighbours.push(moved(here.point, steps, dz * scale, dw * scale));
    const better = (await run(neighbours, 'refine'))
      .filter((c) => c.feasible && c.metric < here.metric)
      .reduce<TuningCandidate | null>((b, c) => (b === null || c.metric < b.metric ? c : b), null);
    if (better !== null) {
      here = better;
      accepted.push(better);
      scale = Math.min(1, scale * 2);
    } else scale /= 2;
  }
  return accepted;
}
