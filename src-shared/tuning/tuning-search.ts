import { z } from 'zod';
import { untilCancelled, type CancelSignal } from '../cancel-signal';
import { describeSplit, SINGLE_SPLIT_SCHEMAS, splitRows } from '../calibrators/calibrator-evaluation';
import { KnobError } from '../errors';
import {
  numberInAcceptedRange,
  TAU_RANGE_SECONDS,
  TEMPERATURE_RANGE,
  WN_RANGE_RAD_PER_SEC,
  ZETA_RANGE,
  type AcceptedRange,
} from '../gate/accepted-ranges';
import { GATE_MODES, GATE_VARIANTS } from '../gate/gate-settings';
import { discreteResponseMetrics } from '../gate/response-metrics';
import type { PairedDifference } from '../metrics/paired-differences';
import type { Trace } from '../trace/trace';
import { labelledFrames } from '../trace/trace-scores';
import { parseWithSchema } from '../zod-issues';
import type { FusedTables } from './fused-tables';
import { TuningBoundsSchema } from './knob-ranges';
import { tuningGrid } from './tuning-grid';
import { tuningImprovement, type ImprovementArgs } from './tuning-improvement';
import { compassFrom, gridSteps, zoomPoints } from './tuning-refinement';
import {
  TUNING_METRIC_IDENTITIES,
  TUNING_METRICS,
  TuningObjectives,
  type TuningObjective,
  type TuningPoint,
} from './tuning-objective';

/**
 * Auto-tuning by replay (issue 17): the knobs that minimise a calibration metric on the held-out
 * frames of a recorded trace, subject to the operator's constraints on how the gate moves.
 *
 * 1. A coarse grid: zeta and wn log-spaced (second-order; wn only for ema; one point for instant),
 *    times the modes, reset horizons and output temperatures asked for.
 * 2. Local refinement, because a binned metric is rugged over the knobs (neighbouring settings
 *    differ by a few per cent as frames cross bin edges) and one descent stops in a local minimum:
 *    a 7 x 7 grid at a quarter of the spacing around each of the best `refineStarts` grid points
 *    (default 8), then a compass search in (log zeta, log wn) from the best three found (compassFrom). The
 *    search stays within the grid's ranges, and never takes an infeasible point.
 * 3. On a long recording (more search frames than `screening.aboveFrames`), steps 1 and 2 score an
 *    even stride of the search frames (about `screening.frames` of them; the gate still runs
 *    through every frame, so each screened frame has its exact gate value), and the best
 *    `screening.confirmed` distinct settings they found are scored again on every search frame,
 *    the best of those chosen. The chosen setting's figures are exact; the grid's and the
 *    refinement's metrics are the screened ones (the result says on how many frames).
 * 4. The paired bootstrap interval of the improvement (best - current) on the evaluation frames,
 *    so a "better" setting inside the noise is reported as indistinguishable.
 *
 * Constraints are on the discrete gate at the trace's frame interval (discreteResponseMetrics):
 * the 2 % settling time, the overshoot and the -3 dB bandwidth. The sweep's grid is returned whole
 * (the heat map), with the Pareto front of metric against settling time among feasible points.
 */
/** A grid axis within the knob's accepted range (so every grid point is a setting the gate accepts). */
const range = (field: string, accepted: AcceptedRange, min: number, max: number, points: number) =>
  z
    .strictObject({
      min: numberInAcceptedRange(`${field} min`, accepted).default(min),
      max: numberInAcceptedRange(`${field} max`, accepted).default(max),
      points: z.number().int().min(1).max(200).default(points),
    })
    .default({ min, max, points })
    .refine((r) => r.min <= r.max, { message: 'min must not exceed max' });

/** The operator's limits on the discrete gate's response (each optional). */
export const TuningConstraintsSchema = z.strictObject({
  maxSettlingSeconds: z.number().positive().optional(),
  maxOvershootPercent: z.number().nonnegative().optional(),
  minBandwidthHz: z.number().positive().optional(),
});

/** Step 3's defaults (TuningRequest.screening). */
export const SCREENING_DEFAULTS = { aboveFrames: 200_000, frames: 50_000, confirmed: 12 } as const;

/** The most settings one grid may hold (a 140 x 140 plane; the default is 20 x 20). */
export const MAX_GRID_POINTS = 20_000;

export const TuningRequestSchema = z
  .strictObject({
    metric: z.enum(TUNING_METRICS).default('ece'),
    split: z.discriminatedUnion('kind', [...SINGLE_SPLIT_SCHEMAS]).default({ kind: 'time', evaluateFraction: 0.3 }),
    /**
     * Which part the search minimises the metric on: 'fit' (default) keeps the held-out part for
     * judging the choice; 'held-out' minimises on the held-out part itself (the choice then flatters
     * the interval: the best of hundreds of settings on the frames that chose it looks better than it
     * is; the result says so).
     */
    searchOn: z.enum(['fit', 'held-out']).default('fit'),
    zeta: range('zeta', ZETA_RANGE, 0.1, 4, 20),
    /** wn's grid; its default top is 0.8 x Nyquist in rad/s, capped at 60 (wnMax null). */
    wnRadPerSec: z
      .strictObject({
        min: numberInAcceptedRange('wn min', WN_RANGE_RAD_PER_SEC).default(0.5),
        max: numberInAcceptedRange('wn max', WN_RANGE_RAD_PER_SEC).nullable().default(null),
        points: z.number().int().min(1).max(200).default(20),
      })
      .default({ min: 0.5, max: null, points: 20 })
      .refine((r) => r.max === null || r.min <= r.max, { message: 'min must not exceed max' }),
    variants: z.array(z.enum(GATE_VARIANTS)).min(1).max(3).optional(),
    modes: z.array(z.enum(GATE_MODES)).min(1).max(2).optional(),
    tauSeconds: z.array(numberInAcceptedRange('tau', TAU_RANGE_SECONDS)).min(1).max(20).optional(),
    temperatures: z.array(numberInAcceptedRange('temperature', TEMPERATURE_RANGE)).min(1).max(50).optional(),
    /**
     * Bounds every setting tried and reported stays inside (the desk sends its knobs' ranges,
     * knob-ranges.ts): the grid's zeta and wn ranges are cut to them.
     */
    within: TuningBoundsSchema.optional(),
    constraints: TuningConstraintsSchema.default({}),
    refine: z.boolean().default(true),
    /** Grid points refined (a binned metric is rugged over the knobs: one start stops in a local minimum). */
    refineStarts: z.number().int().min(1).max(50).default(8),
    replicates: z.number().int().min(50).max(10_000).default(1000),
    /**
     * The screening of a long recording's search (step 3 above), or null to score every search
     * frame at every setting. With the defaults a 10-hour ten-class tune scores every 16th of its
     * 756,000 search frames at each setting (`knob tune` 95.2 s -> 37.5 s on this project's 2-core
     * VM, 2026-12-07; the rest is the gate's replay through every frame and the improvement's
     * bootstrap); a
     * recording of up to about 2.6 hours at 30 fps (200,000 search frames, 70 % of it) is never
     * screened.
     */
    screening: z
      .strictObject({
        aboveFrames: z.number().int().min(100).default(SCREENING_DEFAULTS.aboveFrames),
        frames: z.number().int().min(100).default(SCREENING_DEFAULTS.frames),
        confirmed: z.number().int().min(1).max(100).default(SCREENING_DEFAULTS.confirmed),
      })
      .nullable()
      .default(SCREENING_DEFAULTS),
    seed: z.number().int().nonnegative().max(0xffffffff).default(0),
  })
  .superRefine((request, context) => {
    // the grid is built whole before it is evaluated: bound it, naming what multiplies it
    const factors = [
      ['zeta points', request.zeta.points],
      ['wn points', request.wnRadPerSec.points],
      ['variants', request.variants?.length ?? 1],
      ['modes', request.modes?.length ?? 1],
      ['taus', request.tauSeconds?.length ?? 1],
      ['temperatures', request.temperatures?.length ?? 1],
    ] as const;
    const size = factors.reduce((product, [, n]) => product * n, 1);
    if (size > MAX_GRID_POINTS)
      context.addIssue({
        code: 'custom',
        message: `the grid would hold ${size.toLocaleString('en')} settings (${factors.map(([name, n]) => `${n} ${name}`).join(' x ')}); at most ${MAX_GRID_POINTS.toLocaleString('en')}`,
      });
  });
export type TuningRequestInput = z.input<typeof TuningRequestSchema>;
export type TuningRequest = z.output<typeof TuningRequestSchema>;
export type TuningConstraints = TuningRequest['constraints'];

export function parseTuningRequest(raw: unknown): TuningRequest {
  return parseWithSchema(TuningRequestSchema, raw, {
    code: 'INVALID_SETTINGS',
    what: 'Invalid tuning request',
    root: '(tune)',
  });
}

/** A setting's figures: its metric on the evaluation frames and how its gate moves. */
export interface TuningFigures {
  metric: number;
  settlingTimeSeconds: number | null;
  overshootPercent: number;
  bandwidthHz: number | null;
}

export interface TuningCandidate extends TuningFigures {
  point: TuningPoint;
  feasible: boolean;
  /** The constraints it breaks, in words. */
  violations: string[];
  /** Where it came from ('confirm': a screened setting scored again on every search frame). */
  stage: 'current' | 'grid' | 'refine' | 'confirm';
}

/**
 * Evaluates settings (in order) on the search frames or their screened stride (TuningFrames); the
 * core runs them on two threads, tests and the desk's preview in one.
 */
export type TuningEvaluator = (points: TuningPoint[], on: 'search' | 'screened') => Promise<TuningFigures[]>;

/** One setting's figures: the objective, then the discrete gate's step and frequency figures. */
export function tuningFigures(objective: TuningObjective, point: TuningPoint, hSeconds: number): TuningFigures {
  const metric = objective.evaluate(point);
  const response = discreteResponseMetrics(point.settings, hSeconds, 'app');
  return {
    metric,
    settlingTimeSeconds: response.settlingTimeSeconds,
    overshootPercent: response.overshootPercent,
    bandwidthHz: response.bandwidthHz,
  };
}

/**
 * The frames a tune uses, among the trace's labelled frames: the search minimises the metric on
 * `search` (the split's fit part) and reports the current and the chosen setting on `heldOut` (its
 * evaluation part), so the improvement's interval is not flattered by the choice: the best of
 * hundreds of settings on the frames that chose it looks better than it is. Split 'none' searches
 * and reports on every labelled frame (and says so).
 */
export interface TuningFrames {
  search: Int32Array;
  /** An even stride of `search` that steps 1 and 2 score (step 3); null: they score `search` itself. */
  screened: Int32Array | null;
  heldOut: Int32Array;
}

export function tuningFrames(
  trace: Trace,
  split: TuningRequest['split'],
  searchOn: TuningRequest['searchOn'] = 'fit',
  screening: TuningRequest['screening'] = null,
): TuningFrames {
  const labelled = labelledFrames(trace);
  if (labelled.length < 40)
    throw new KnobError('INVALID_INPUT', `the trace has ${labelled.length} labelled frames; tuning needs at least 40`);
  const { fit, evaluate } = splitRows(labelled.length, split) as { fit: number[]; evaluate: number[] };
  const frames = (rows: number[]) => Int32Array.from(rows, (i) => labelled[i]!);
  const heldOut = frames(evaluate);
  const search = searchOn === 'held-out' ? heldOut : frames(fit);
  return { search, screened: screenedFrames(search, screening), heldOut };
}

/**
 * Every s-th search frame, s the smallest stride that keeps at most `screening.frames` (step 3);
 * null where no screening applies, a stride of 1 (every frame) included.
 */
export function screenedFrames(search: Int32Array, screening: TuningRequest['screening']): Int32Array | null {
  if (screening === null || search.length <= screening.aboveFrames) return null;
  const stride = Math.ceil(search.length / screening.frames);
  return stride <= 1 ? null : search.filter((_, i) => i % stride === 0);
}

/** The split as the desk and the CLI name it (30 % held out; the random one seeded). */
export function tuningSplitOf(
  kind: 'time' | 'random' | 'none',
  evaluateFraction = 0.3,
  seed = 0,
): TuningRequest['split'] {
  if (kind === 'none') return { kind: 'none' };
  return kind === 'random' ? { kind: 'random', evaluateFraction, seed } : { kind: 'time', evaluateFraction };
}

export function violationsOf(figures: TuningFigures, constraints: TuningConstraints): string[] {
  const out: string[] = [];
  const { maxSettlingSeconds, maxOvershootPercent, minBandwidthHz } = constraints;
  if (
    maxSettlingSeconds !== undefined &&
    !(figures.settlingTimeSeconds !== null && figures.settlingTimeSeconds <= maxSettlingSeconds)
  )
    out.push(`settling ${figures.settlingTimeSeconds?.toFixed(3) ?? '∞'} s > ${maxSettlingSeconds} s`);
  if (maxOvershootPercent !== undefined && !(figures.overshootPercent <= maxOvershootPercent))
    out.push(`overshoot ${figures.overshootPercent.toFixed(2)} % > ${maxOvershootPercent} %`);
  // the instant gate passes everything: no bandwidth limit below Nyquist (null)
  if (minBandwidthHz !== undefined && figures.bandwidthHz !== null && figures.bandwidthHz < minBandwidthHz)
    out.push(`bandwidth ${figures.bandwidthHz.toFixed(3)} Hz < ${minBandwidthHz} Hz`);
  return out;
}

/** Feasible candidates no other feasible one beats on both metric and settling time (lower both). */
export function paretoFront(candidates: TuningCandidate[]): TuningCandidate[] {
  const settling = (c: TuningCandidate) => c.settlingTimeSeconds ?? Infinity;
  const sorted = candidates
    .filter((c) => c.feasible && Number.isFinite(c.metric))
    .sort((a, b) => settling(a) - settling(b) || a.metric - b.metric);
  const front: TuningCandidate[] = [];
  let bestMetric = Infinity;
  for (const candidate of sorted)
    if (candidate.metric < bestMetric) {
      front.push(candidate);
      bestMetric = candidate.metric;
    }
  return front;
}

export interface TuningResult {
  metric: TuningRequest['metric'];
  identity: string;
  split: string;
  /** Frames the search minimised the metric on, and the held-out frames the result is reported on. */
  searchFrameCount: number;
  heldOutFrameCount: number;
  /**
   * The search frames the grid and the refinement scored (step 3), or null when they scored every
   * one; the chosen and the current setting are scored on every search frame either way.
   */
  screenedFrameCount: number | null;
  /** The search minimised on the frames the result is reported on (split 'none', or searchOn 'held-out'). */
  searchedOnHeldOut: boolean;
  /** The metric of the current and the chosen setting on the held-out frames. */
  heldOut: { current: number; best: number };
  constraints: TuningConstraints;
  hSeconds: number;
  current: TuningCandidate;
  best: TuningCandidate;
  /** The coarse grid, in tuningGrid order (the sweep's heat map). */
  grid: TuningCandidate[];
  /** The refinement's accepted steps, in order. */
  refinement: TuningCandidate[];
  /** The screened settings scored again on every search frame (step 3; empty when not screened). */
  confirmed: TuningCandidate[];
  pareto: TuningCandidate[];
  /** best - current on the held-out frames, paired bootstrap; verdict at 95 %. */
  improvement: PairedDifference;
  evaluations: number;
  /**
   * False when no grid point met the constraints, or (screened) no confirmed setting did on every
   * search frame: best is then the current setting.
   */
  foundFeasible: boolean;
}

export interface TuningRunOptions {
  evaluate?: TuningEvaluator;
  /** Fused-score tables of the labelled frames, when the caller built them (fused-tables.ts). */
  tables?: FusedTables | null;
  /** Computes the improvement (default: on this thread). */
  improvement?: (...args: ImprovementArgs) => Promise<PairedDifference>;
  onProgress?: (done: number, total: number, stage: string) => void;
  signal?: CancelSignal;
}

/** Tunes `current` on `trace`; evaluation runs through `evaluate` (default: this thread). */
export async function tune(
  trace: Trace,
  request: TuningRequest,
  current: TuningPoint,
  options: TuningRunOptions = {},
): Promise<TuningResult> {
  const hSeconds = trace.nominalDtSeconds;
  const frames = tuningFrames(trace, request.split, request.searchOn, request.screening);
  // built only when this thread evaluates (a pool's threads hold their own)
  let objectives: TuningObjectives | null = null;
  const evaluate: TuningEvaluator =
    options.evaluate ??
    (async (points, on) => {
      objectives ??= new TuningObjectives(trace, frames, request.metric, options.tables ?? null);
      const objective = objectives.on(on);
      return points.map((point) => tuningFigures(objective, point, hSeconds));
    });
  // steps 1 and 2 on the screened stride where there is one
  const searchedOn = frames.screened === null ? 'search' : 'screened';
  const checkCancel = () => {
    if (options.signal?.aborted) throw new KnobError('CANCELLED', 'tuning cancelled');
  };
  const candidate = (point: TuningPoint, figures: TuningFigures, stage: TuningCandidate['stage']): TuningCandidate => {
    const violations = Number.isFinite(figures.metric)
      ? violationsOf(figures, request.constraints)
      : ['the metric is not finite here'];
    return { ...figures, point, feasible: violations.length === 0, violations, stage };
  };
  let evaluations = 0;
  const run = async (
    points: TuningPoint[],
    stage: TuningCandidate['stage'],
    on: 'search' | 'screened' = searchedOn,
  ): Promise<TuningCandidate[]> => {
    checkCancel();
    const figures = await evaluate(points, on);
    evaluations += points.length;
    return points.map((point, i) => candidate(point, figures[i]!, stage));
  };

  const [currentCandidate] = await run([current], 'current', 'search');
  const gridPoints = tuningGrid(request, current, hSeconds);
  const grid: TuningCandidate[] = [];
  // in chunks, for progress and cancellation
  const chunk = 100;
  for (let from = 0; from < gridPoints.length; from += chunk) {
    grid.push(...(await run(gridPoints.slice(from, from + chunk), 'grid')));
    options.onProgress?.(grid.length, gridPoints.length, 'grid');
  }
  const byMetric = (a: TuningCandidate, b: TuningCandidate) => a.metric - b.metric;
  /** Step 3: the best distinct feasible settings of the screened search, scored on every search frame. */
  const confirm = async (screened: TuningCandidate[]): Promise<TuningCandidate[]> => {
    const distinct = new Map<string, TuningPoint>();
    for (const c of screened.filter((c) => c.feasible).sort(byMetric)) {
      if (distinct.size === request.screening!.confirmed) break;
      distinct.set(JSON.stringify(c.point), c.point);
    }
    const scored = await run([...distinct.values()], 'confirm', 'search');
    options.onProgress?.(scored.length, scored.length, 'confirm');
    return scored;
  };
  const feasible = grid.filter((c) => c.feasible).sort(byMetric);
  let best: TuningCandidate | null = feasible[0] ?? null;
  const refinement: TuningCandidate[] = [];
  const movable = (c: TuningCandidate) => c.point.settings.variant !== 'instant';
  if (request.refine && best !== null) {
    const steps = gridSteps(request, hSeconds);
    // a local grid at a quarter of the spacing around each of the best grid points
    const zoomStarts = feasible.filter(movable).slice(0, request.refineStarts);
    // progress in refinement steps: each zoom, then each of (at most) three compass searches
    const refineSteps = zoomStarts.length + 3;
    const zoomed: TuningCandidate[] = [];
    for (const [i, start] of zoomStarts.entries()) {
      const tried = await run(zoomPoints(start.point, steps), 'refine');
      zoomed.push(...tried.filter((c) => c.feasible));
      options.onProgress?.(i + 1, refineSteps, 'refine');
    }
    zoomed.sort(byMetric);
    refinement.push(...zoomed.slice(0, request.refineStarts));
    // then a compass search from the best three found so far
    const compassStarts = [...zoomed.slice(0, 3), best].filter(movable).sort(byMetric).slice(0, 3);
    for (const [i, start] of compassStarts.entries()) {
      const found = await compassFrom(start, steps, run);
      refinement.push(...found);
      options.onProgress?.(zoomStarts.length + i + 1, refineSteps, 'refine');
    }
    for (const c of refinement) if (c.metric < best.metric) best = c;
  }
  const confirmed = best !== null && frames.screened !== null ? await confirm([...grid, ...refinement]) : [];
  // a screened search chooses among the confirmed settings only, whose figures are on every search
  // frame; none feasible there (a metric not finite on every frame) keeps the current setting
  if (frames.screened !== null) best = confirmed.filter((c) => c.feasible).sort(byMetric)[0] ?? null;
  const chosen = best ?? currentCandidate!;
  checkCancel();
  const judge =
    options.improvement ??
    (async (...args: ImprovementArgs) => tuningImprovement(trace, options.tables ?? null, ...args));
  const improvement = await untilCancelled(
    judge(frames.heldOut, request.metric, current, chosen.point, {
      replicates: request.replicates,
      seed: request.seed,
    }),
    options.signal,
    'tuning cancelled',
  );
  return {
    metric: request.metric,
    identity: TUNING_METRIC_IDENTITIES[request.metric],
    split: describeSplit(request.split),
    searchFrameCount: frames.search.length,
    screenedFrameCount: frames.screened?.length ?? null,
    searchedOnHeldOut: request.split.kind === 'none' || request.searchOn === 'held-out',
    heldOutFrameCount: frames.heldOut.length,
    heldOut: { current: improvement.a, best: improvement.b },
    constraints: request.constraints,
    hSeconds,
    current: currentCandidate!,
    best: chosen,
    grid,
    refinement,
    confirmed,
    pareto: paretoFront([...grid, ...refinement]),
    improvement,
    evaluations,
    foundFeasible: best !== null,
  };
}
