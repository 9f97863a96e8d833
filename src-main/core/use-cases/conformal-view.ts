import type { ApiParsedParams, ApiResult } from '../../../src-shared/api/contract';
import { fitConformal, targetCoverage } from '../../../src-shared/calibrators/conformal-prediction';
import { conformalSetColumns, type ConformalSetColumns } from '../../../src-shared/calibrators/conformal-sets';
import { describeCalibrator } from '../../../src-shared/calibrators';
import type { CancelSignal } from '../../../src-shared/cancel-signal';
import { stopIfCancelled } from '../../../src-shared/cancel-signal';
import { KnobError } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { wilsonInterval } from '../../../src-shared/metrics/interval-variants';
import { requireEveryClass } from '../../../src-shared/trace/kept-classes';
import type { ViewBasis } from './metrics-snapshot';
import { groupKeys } from './view-groups';
import { replayedView, type TraceSource } from './view-replay';

/**
 * Split-conformal prediction sets of the recording's output as the desk shows it (fused at the
 * knobs, then the output calibrator): the threshold calibrated on the first labelled frames of the
 * window (DEFINITIONS.md 4.8, q_hat the ceil((n + 1)(1 - alpha))-th smallest score), the sets
 * judged on the rest, overall and per group, with the coverage's Wilson interval and the set sizes.
 * The guarantee is marginal and assumes the calibration and evaluated frames exchangeable: a drifting
 * stream breaks it, and the groups show where.
 */
export type ConformalSets = Omit<ApiResult<'conformal.sets'>, 'computeMs'>;
type Request = ApiParsedParams<'conformal.sets'>;
type Coverage = ConformalSets['overall'];

const SCORE_NAMES = { lac: 'LAC, score 1 - p_y', aps: 'APS, not randomised' } as const;
/** Set sizes tallied one by one below this; the rest together. */
const SIZE_TALLY = 10;

export function conformalSets(
  recorded: TraceSource,
  settings: GateSettings,
  basis: ViewBasis,
  request: Request,
  signal?: CancelSignal,
): ConformalSets {
  // a set reads every class's probability of every frame
  requireEveryClass(recorded.view(), 'conformal prediction sets');
  const run = replayedView(recorded, settings, request.lastFrames, {
    calibrator: basis.calibrator,
    everyClass: 'all',
    signal,
  });
  const labelled = run.frames.length;
  if (run.scores === null || labelled < 2)
    throw new KnobError(
      'INVALID_INPUT',
      `conformal prediction sets need at least 2 labelled frames in ${run.window}, got ${labelled}`,
    );
  const { probabilities, labels, classCount: k } = run.scores;
  const split = Math.min(labelled - 1, Math.max(1, Math.floor(labelled * request.calibrationShare)));
  const params = fitConformal(
    probabilities.subarray(0, split * k),
    labels.subarray(0, split),
    k,
    request.alpha,
    request.score,
  );
  stopIfCancelled(signal, 'the prediction sets were cancelled');
  const columns = conformalSetColumns(params, probabilities.subarray(split * k), labels.subarray(split), k, signal);
  const evaluated = labelled - split;
  const all = Int32Array.from({ length: evaluated }, (_, j) => j);
  const qHat = Number.isFinite(params.qHat) ? params.qHat : null;
  return {
    recordingId: basis.recordingId,
    settingsVersion: basis.version,
    calibrator: basis.calibrator === null ? null : describeCalibrator(basis.calibrator),
    window: run.window,
    identity:
      `split conformal (${SCORE_NAMES[request.score]}, alpha ${request.alpha}, q_hat the ` +
      `ceil((n + 1)(1 - alpha))-th smallest of n = ${split} calibration scores: the first ${split} labelled ` +
      `frames of ${run.window}; judged on the last ${evaluated}; coverage with its Wilson 95 % interval)`,
    score: request.score,
    alpha: request.alpha,
    qHat,
    calibrationFrames: split,
    evaluatedFrames: evaluated,
    assumption:
      `coverage of at least ${targetCoverage(request.alpha)} on average over the evaluated frames if they and the ` +
      'calibration frames are exchangeable (no drift between them); not per group, and not under drift' +
      (qHat === null ? `; with ${split} calibration frames q_hat is +infinity: every class is in every set` : ''),
    overall: coverageOver(columns, all),
    sizes: sizeTally(columns.size, k),
    groupBy: request.groupBy,
    groups: request.groupBy === 'none' ? [] : groupsOf(run, request.groupBy, split, columns),
  };
}

function coverageOver(columns: ConformalSetColumns, indices: Int32Array): Coverage {
  let covered = 0;
  let size = 0;
  let empty = 0;
  let singleton = 0;
  for (const j of indices) {
    covered += columns.covered[j];
    size += columns.size[j];
    if (columns.size[j] === 0) empty++;
    if (columns.size[j] === 1) singleton++;
  }
  const frames = indices.length;
  const coverage = covered / frames;
  return {
    frames,
    coverage,
    ...wilsonInterval(coverage, frames),
    meanSetSize: size / frames,
    emptyShare: empty / frames,
    singletonShare: singleton / frames,
  };
}

function sizeTally(sizes: Int32Array, classCount: number): ConformalSets['sizes'] {
  const shown = Math.min(SIZE_TALLY, classCount + 1);
  const counts = new Array<number>(shown + 1).fill(0);
  for (const s of sizes) counts[Math.min(s, shown)]++;
  const tally = counts.slice(0, shown).map((frames, size) => ({ size: String(size), frames }));
  return shown <= classCount ? [...tally, { size: `${shown} or more`, frames: counts[shown]! }] : tally;
}

/** The evaluated frames (labelled frames from `split` on) by group, in the groups' order of first frame. */
function groupsOf(
  run: Parameters<typeof groupKeys>[0],
  groupBy: Exclude<Request['groupBy'], 'none'>,
  split: number,
  columns: ConformalSetColumns,
): ConformalSets['groups'] {
  const { keys, name } = groupKeys(run, groupBy);
  const members = new Map<number, number[]>();
  for (let j = split; j < keys.length; j++) {
    const list = members.get(keys[j]) ?? [];
    list.push(j - split);
    members.set(keys[j], list);
  }
  return [...members].map(([code, indices]) => ({
    key: name(code),
    ...coverageOver(columns, Int32Array.from(indices)),
  }));
}
