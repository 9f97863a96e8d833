import {
  pairedDifferenceParts,
  pairedDifferencesFromParts,
  type PairedDifference,
  type PairedDifferenceParts,
} from '../metrics/paired-differences';
import type { Trace } from '../trace/trace';
import type { FusedTables } from './fused-tables';
import { TUNING_METRIC_IDENTITIES, TuningObjective, type TuningMetric, type TuningPoint } from './tuning-objective';

/**
 * best - current of `metric` on `frames`, with its paired bootstrap interval (the same resamples for
 * both) and the verdict at 95 %. The resampling is the slow part of a tune for the smooth and
 * binned metrics (SmoothECE: seconds), so the core runs it on a tuning thread.
 */
export type ImprovementArgs = [
  frames: Int32Array,
  metric: TuningMetric,
  current: TuningPoint,
  best: TuningPoint,
  /** replicateRange: a thread's share of the replicates (tuningImprovementParts). */
  resampling: { replicates: number; seed: number; replicateRange?: { from: number; to: number } },
];

export function tuningImprovement(
  trace: Trace,
  tables: FusedTables | null,
  ...args: ImprovementArgs
): PairedDifference {
  const [, metric, , , resampling] = args;
  return improvementFromParts(metric, tuningImprovementParts(trace, tables, ...args), resampling);
}

/**
 * The improvement's parts on the replicates of `resampling.replicateRange` (all by default): the
 * pool's threads each make a range, and the draws they return add (pairedDifferenceParts).
 */
export function tuningImprovementParts(
  trace: Trace,
  tables: FusedTables | null,
  ...[frames, metric, current, best, resampling]: ImprovementArgs
): PairedDifferenceParts {
  const objective = new TuningObjective(trace, frames, metric, tables);
  return pairedDifferenceParts(
    [[objective.statisticAt(current)]],
    [[objective.statisticAt(best)]],
    [frames.length],
    resampling,
  );
}

/** The improvement from its parts, every replicate's draw in them. */
export function improvementFromParts(
  metric: TuningMetric,
  parts: PairedDifferenceParts,
  resampling: ImprovementArgs[4],
): PairedDifference {
  const statistic = { name: metric, identity: TUNING_METRIC_IDENTITIES[metric], lowerIsBetter: true };
  return pairedDifferencesFromParts([statistic], parts, 1, resampling)[0]!;
}
