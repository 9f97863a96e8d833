import { finiteOrNull } from '../../../src-shared/api/finite-or-null';
import type { ApiParsedParams, ApiResult } from '../../../src-shared/api/contract';
import type { CancelSignal } from '../../../src-shared/cancel-signal';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import {
  headlineStatistics,
  meanOverGroups,
  type HeadlineFigure,
  type HeadlineStatistic,
} from '../../../src-shared/metrics/headline-intervals';
import { independentDifferences, type PairedDifference } from '../../../src-shared/metrics/paired-differences';
import { EQUAL_WIDTH_15 } from '../../../src-shared/metrics/metric-suite';
import { reliabilityDiagram } from '../../../src-shared/metrics/reliability';
import { requireEveryClass } from '../../../src-shared/trace/kept-classes';
import type { Trace } from '../../../src-shared/trace/trace';
import { conditionsOfFrames, featuresOfFrames } from '../../../src-shared/trace/trace-scores';
import { compareCalibratorsAlongside, compareCalibratorsOn } from './compare-calibrators';
import type { ParallelMetricSuite } from '../metrics/parallel-metric-suite';
import type { Comparison, ViewBasis } from './metrics-snapshot';
import { plainSource, replayedView, type TraceSource } from './view-replay';

/**
 * The desk's comparisons beside its snapshot (metrics-snapshot.ts): two recent runs, and output
 * calibrators fitted and compared on the recording. Both read every class of every frame.
 */
export type RunsComparison = Omit<ApiResult<'runs.compare'>, 'computeMs'>;
export interface RecentRunTrace {
  trace: Trace;
  settings: GateSettings;
  run: RunsComparison['runs'][number]['run'];
}

/** A paired or independent difference as the API carries it (non-finite values as null). */
export function differenceEntry(d: PairedDifference): Comparison['differences'][number] {
  return {
    name: d.name,
    identity: d.identity,
    a: finiteOrNull(d.a),
    b: finiteOrNull(d.b),
    difference: finiteOrNull(d.difference),
    lo: finiteOrNull(d.interval.lo),
    hi: finiteOrNull(d.interval.hi),
    method: d.interval.identity,
    lowerIsBetter: d.lowerIsBetter,
    verdict: d.verdict,
    ...(d.note === undefined ? {} : { note: d.note }),
  };
}

/**
 * Two to eight recent runs, each replayed at the settings it was recorded with: the headline
 * figures with their intervals, and each run after the first minus the first (the reference) with
 * an interval from resampling each run on its own. With m = n - 1 runs against the reference, each
 * figure's m intervals are Bonferroni-adjusted (level 1 - 0.05/m: all m hold together with at least
 * 95 %), on enough resamples to leave at least 10 in each tail (400 m, at least 1,000).
 */
export function compareRecentRuns(
  runs: readonly RecentRunTrace[],
  /** Polled between resamples: a cancelled comparison stops with CANCELLED. */
  signal?: CancelSignal,
): RunsComparison {
  for (const { trace, run } of runs) requireEveryClass(trace, `comparing recent runs (${run.id})`);
  const replayed = runs.map((r) => replayedView(plainSource(r.trace), r.settings, undefined));
  const statistics = replayed.map((r) => (r.scores === null ? null : headlineStatistics(r.scores, r.top!)));
  const figures = (of: HeadlineStatistic[] | null, count: number) =>
    of === null
      ? []
      : meanOverGroups([of], [count]).map((f) => ({
          ...f,
          value: finiteOrNull(f.value),
          lo: finiteOrNull(f.lo),
          hi: finiteOrNull(f.hi),
        }));
  // the runs' top-label diagrams on the bins of their ECE, for the desk's overlay
  const reliability = (top: (typeof replayed)[number]['top']) =>
    top === null ? null : reliabilityDiagram(top.confidence, top.correct, EQUAL_WIDTH_15);
  const against = runs.length - 1;
  const resampling = { level: 1 - 0.05 / against, replicates: Math.max(1000, 400 * against), signal };
  const [reference, referenceRun] = [statistics[0]!, replayed[0]!];
  const bonferroni = `Bonferroni: ${against} runs against the reference, all ${against} intervals of a figure hold together with at least 95 %`;
  return {
    runs: runs.map((r, i) => ({
      run: r.run,
      figures: figures(statistics[i]!, replayed[i]!.frames.length),
      reliability: reliability(replayed[i]!.top),
    })),
    differences: runs.slice(1).map((r, j) => {
      const other = statistics[j + 1]!;
      return {
        run: r.run.id,
        differences:
          reference === null || other === null
            ? []
            : independentDifferences(
                reference,
                other,
                { a: referenceRun.frames.length, b: replayed[j + 1]!.frames.length },
                resampling,
              )
                .map(differenceEntry)
                .map((d) => (against === 1 ? d : { ...d, method: `${d.method}; ${bonferroni}` })),
      };
    }),
  };
}

/**
 * Calibrators fitted on the recording's fused output at `settings` (uncalibrated: a calibrator is
 * fitted on what it will calibrate) and compared on held-out labelled frames; with `parallel`, on
 * its helper thread and this one (compareCalibratorsAlongside: the same comparison).
 */
export async function compareOutputCalibrators(
  recorded: TraceSource,
  settings: GateSettings,
  basis: ViewBasis,
  request: ApiParsedParams<'calibrator.compare'>,
  /** Each method before its fit; the signal is read between fits. */
  progress: { onProgress?: (done: number, total: number, stage: string) => void; signal?: CancelSignal } = {},
  parallel?: ParallelMetricSuite,
): Promise<Omit<ApiResult<'calibrator.compare'>, 'computeMs'>> {
  // a calibrator is fitted on every class's logits: the full vectors
  requireEveryClass(recorded.view(), 'fitting output calibrators');
  const run = replayedView(recorded, settings, request.lastFrames, { everyClass: 'logits' });
  const subject = {
    name: `the recording's fused output (${run.window})`,
    logits: run.scores?.logits ?? new Float64Array(0),
    labels: run.scores?.labels ?? new Int32Array(0),
    classCount: run.trace.classCount,
    features: featuresOfFrames(run.trace, run.frames),
    conditions: conditionsOfFrames(
      run.trace,
      run.frames,
      request.conditionBy ?? ['corruption'],
      request.conditionHysteresisFrames,
    ),
  };
  const comparison =
    parallel === undefined
      ? compareCalibratorsOn(subject, request.methods, request.split, progress)
      : await compareCalibratorsAlongside(subject, request.methods, request.split, progress, (methods, signal) =>
          parallel.startCalibrators({ ...subject, methods, split: request.split }, signal),
        );
  const figures = (list: HeadlineFigure[]) =>
    list.map((f) => ({ ...f, value: finiteOrNull(f.value), lo: finiteOrNull(f.lo), hi: finiteOrNull(f.hi) }));
  return {
    recordingId: basis.recordingId,
    settingsVersion: basis.version,
    split: comparison.split,
    fitFrames: comparison.fitFrames,
    evaluatedFrames: comparison.evaluatedFrames,
    before: figures(comparison.before),
    beforeReliability: comparison.beforeReliability,
    methods: comparison.methods.map((m) => ({
      ...m,
      report: { ...m.report, objective: finiteOrNull(m.report.objective) },
      figures: figures(m.figures),
    })),
  };
}
