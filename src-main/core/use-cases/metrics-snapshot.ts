import { finiteOrNull } from '../../../src-shared/api/finite-or-null';
import { stopIfCancelled, type CancelSignal } from '../../../src-shared/cancel-signal';
import type { ApiResult, MetricsOptions } from '../../../src-shared/api/contract';
import { describeCalibrator, type CalibratorSpec } from '../../../src-shared/calibrators';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { resample } from '../../../src-shared/metrics/bootstrap';
import { groupedMetrics } from '../../../src-shared/metrics/grouped';
import { groupKeys } from './view-groups';
import {
  bootstrapIntervalsOf,
  headlineStatistics,
  type HeadlineStatistic,
  type KeyedInterval,
} from '../../../src-shared/metrics/headline-intervals';
import { pairedDifferences } from '../../../src-shared/metrics/paired-differences';
import {
  EQUAL_WIDTH_15,
  assembleSuite,
  metricSuite,
  tceNotEnoughFrames,
} from '../../../src-shared/metrics/metric-suite';
import { classwiseMetricsOf, classwiseStatisticsUnder } from '../../../src-shared/metrics/binned-metrics';
import { binningIdentity, type EqualWidthSpec } from '../../../src-shared/metrics/binning';
import {
  DEFAULT_BINNING_CHOICE,
  binningOfChoice,
  chosenFigureIdentity,
  chosenFigureLabel,
  type BinningChoice,
} from '../../../src-shared/metrics/binning-choice';
import { classDiagramBins, viewBinnings, viewStatistics } from '../../../src-shared/metrics/view-binnings';
import type { ParallelMetricSuite } from '../metrics/parallel-metric-suite';
import type { BinTotals } from '../../../src-shared/metrics/calibration-error';
import { metric, type MetricValue } from '../../../src-shared/metrics/metric-value';
import { keptClassesText, withKeptClassBounds } from '../../../src-shared/metrics/kept-class-bounds';
import { l2CeIntervalsWithBootstrap } from '../../../src-shared/metrics/calibration-error-interval';
import {
  TCE_DEFAULT_MIN_BIN_SIZE,
  testBasedCalibrationError,
} from '../../../src-shared/metrics/test-based-calibration-error';
import {
  smoothCurveArrays,
  classReliabilityDiagrams,
  confidenceHistogram,
  reliabilityDiagram,
  smoothReliabilityCurve,
  type ReliabilityDiagram,
} from '../../../src-shared/metrics/reliability';
import { topLabelOnlyScores, type ClassScores, type TopLabelScores } from '../../../src-shared/metrics/scores';
import { requireEveryClass } from '../../../src-shared/trace/kept-classes';
import { TCE_RUN_LIMIT } from '../engine/run-analysis';
import type { TableProgress } from './held-recording';
import { differenceEntry } from './view-comparisons';
import { replayedView, tablePathTemperature, type Replayed, type TraceSource } from './view-replay';

/**
 * What the desk's calibration panel shows for one trace and one setting, computed by replay (no
 * model call): every metric of the suite with identities, bootstrap intervals of the headline
 * values, the reliability diagram (top-label, and one per class), the smooth reliability curve with
 * its band and support, the confidence histogram, and the headline values with intervals per group
 * (severity, corruption, predicted class, gate bucket). A comparison replays twice and adds the
 * paired bootstrap differences.
 */
export type Snapshot = ApiResult<'metrics.snapshot'>;
export type Comparison = Omit<ApiResult<'metrics.compare'>, 'computeMs'>;

const entry = (m: MetricValue) => ({
  name: m.name,
  identity: m.identity,
  value: finiteOrNull(m.value),
  ...(m.approximation === undefined ? {} : { approximation: m.approximation }),
  ...(m.bound === undefined || !Number.isFinite(m.bound) ? {} : { bound: m.bound }),
  ...(m.unavailable === undefined ? {} : { unavailable: m.unavailable }),
});
const intervalEntries = (intervals: Record<string, KeyedInterval>) =>
  Object.entries(intervals).map(([identity, i]) => ({
    identity,
    lo: i.lo,
    hi: i.hi,
    method: i.identity,
    ...(i.note === undefined ? {} : { note: i.note }),
  }));

/** Resamples for the intervals of each group (fewer than the headline's: there are many groups). */
const GROUP_REPLICATES = 100;

/**
 * What a view is computed from: the recording, the settings version, and the output calibrator
 * applied after fusion (null for none).
 */
export interface ViewBasis {
  version: number;
  recordingId: number;
  calibrator: CalibratorSpec | null;
}

function diagramEntry(diagram: ReliabilityDiagram) {
  return {
    identity: diagram.identity,
    bins: diagram.bins.map((b) => ({
      lo: b.lo,
      hi: b.hi,
      count: b.count,
      meanConfidence: finiteOrNull(b.meanConfidence),
      accuracy: finiteOrNull(b.accuracy),
      gap: finiteOrNull(b.gap),
      wilsonLo: finiteOrNull(b.wilsonLo),
      wilsonHi: finiteOrNull(b.wilsonHi),
    })),
  };
}

/**
 * p_k against y = k for every class, from the classes' statistics under equal-width bins (the
 * chosen ones when they are equal-width; equal-mass edges would differ from class to class and the
 * statistics do not keep them, so 15 equal-width then, as each diagram's identity says).
 */
function classDiagrams(
  perClass: readonly BinTotals[],
  spec: EqualWidthSpec,
  labelNames: string[],
): Snapshot['classReliability'] {
  const names = perClass.map((_, c) => labelNames[c] ?? String(c));
  return classReliabilityDiagrams(perClass, spec, names).map((diagram, c) => ({
    classIndex: c,
    label: names[c]!,
    ...diagramEntry(diagram),
  }));
}

function groups(
  run: Replayed,
  groupBy: Snapshot['groupBy'],
  resampled: boolean,
  signal: CancelSignal | undefined,
): Snapshot['groups'] {
  if (groupBy === 'none' || run.scores === null || run.top === null) return [];
  const { scores, top } = run;
  const { keys, name } = groupKeys(run, groupBy);
  const intervals = new Map<string, Snapshot['intervals']>();
  // a kept-class trace's group figures are its estimates: bounds are stated for the whole window only
  const estimate =
    run.kept === undefined
      ? undefined
      : `${keptClassesText(run.kept)}: an estimate; no stated bound for a group of frames`;
  // a group's headline figures need its frames' top-label pairs, NLL and Brier terms only
  const pick = resample;
  const grouped = groupedMetrics(keys, name, (indices) => {
    const subset = topLabelOnlyScores(
      scores.classCount,
      pick(scores.labels, indices),
      pick(scores.sampleNll!, indices),
      pick(scores.sampleBrier!, indices),
    );
    const subsetTop = {
      confidence: pick(top.confidence, indices),
      predicted: pick(top.predicted, indices),
      correct: pick(top.correct, indices),
    };
    const statistics = headlineStatistics(subset, subsetTop);
    const key = name(keys[indices[0]]);
    if (resampled) {
      intervals.set(
        key,
        keptIntervalNotes(
          run,
          intervalEntries(bootstrapIntervalsOf(statistics, indices.length, { replicates: GROUP_REPLICATES, signal })),
          'no bound is stated for a group of frames',
        ),
      );
    }
    return statistics.map((s) => metric(s.name, s.identity, s.evaluate(null), estimate));
  });
  return grouped.map((g) => ({
    key: g.key,
    count: g.count,
    values: g.metrics.map(entry),
    intervals: intervals.get(g.key) ?? [],
  }));
}

/** The debiased L2-CE (U-statistic, 15 equal-width bins) with its asymptotic and bootstrap intervals. */
function l2CeIntervals(top: TopLabelScores, signal: CancelSignal | undefined): Snapshot['intervals'] {
  const { asymptotic, bootstrap } = l2CeIntervalsWithBootstrap(top.confidence, top.correct, EQUAL_WIDTH_15, 0.95, {
    signal,
  });
  return [
    { identity: asymptotic.valueIdentity, lo: asymptotic.lo, hi: asymptotic.hi, method: asymptotic.identity },
    {
      identity: asymptotic.valueIdentity,
      lo: bootstrap.lo,
      hi: bootstrap.hi,
      method: bootstrap.identity,
      ...(bootstrap.note === undefined ? {} : { note: bootstrap.note }),
    },
  ];
}

/**
 * TCE and its bins, for its reliability view (it needs more samples than its minimum bin size, and
 * costs one exact test per distinct prediction: left out beyond TCE_RUN_LIMIT frames, as in runs).
 */
function tceEntry(top: TopLabelScores): Snapshot['tce'] {
  if (top.confidence.length <= TCE_DEFAULT_MIN_BIN_SIZE || top.confidence.length > TCE_RUN_LIMIT) return null;
  const result = testBasedCalibrationError(top.confidence, top.correct);
  return { identity: result.identity, value: result.value, bins: result.bins };
}

const tceValue = (tce: NonNullable<Snapshot['tce']>): MetricValue => ({
  name: 'TCE',
  identity: tce.identity,
  value: tce.value,
});

/** The suite's values, and every class's statistics under suiteBinnings (none on the table path). */
interface SuiteOfView {
  values: MetricValue[];
  classwise: BinTotals[][] | undefined;
}

/** The suite on this thread; every class's statistics once, for its classwise metrics and the diagrams. */
function suiteOf(scores: ClassScores, top: TopLabelScores, everyClass: boolean, choice: BinningChoice): SuiteOfView {
  const binnings = viewBinnings(scores.sampleCount, choice);
  const classwise = everyClass ? classwiseStatisticsUnder(scores, binnings) : undefined;
  return { values: metricSuite(scores, { everyClass, binnings }, top, classwise), classwise };
}

/**
 * The suite with its top-label tasks on the helper thread while this one reads every class (the
 * n x K probabilities stay here): the same values as suiteOf.
 */
async function suiteAlongside(
  scores: ClassScores,
  top: TopLabelScores,
  everyClass: boolean,
  parallel: ParallelMetricSuite,
  choice: BinningChoice,
): Promise<SuiteOfView> {
  const binnings = viewBinnings(scores.sampleCount, choice);
  const { mine: classwise, results } = await parallel.topLabelTasksAlongside(
    scores,
    top,
    () => (everyClass ? classwiseStatisticsUnder(scores, binnings) : undefined),
    binnings,
  );
  if (classwise !== undefined) results.set('classwise', classwiseMetricsOf(classwise, binnings));
  return { values: assembleSuite(scores, { everyClass, binnings }, results), classwise };
}

function snapshotOf(
  run: Replayed,
  statistics: HeadlineStatistic[] | null,
  computedFrom: ViewBasis,
  options: Partial<MetricsOptions>,
  started: number,
  suite: SuiteOfView | null = run.scores === null
    ? null
    : suiteOf(run.scores, run.top!, run.everyClass, options.binning ?? DEFAULT_BINNING_CHOICE),
  /** Polled between resamples: a cancelled snapshot stops with CANCELLED (metrics worker). */
  signal?: CancelSignal,
): Snapshot {
  const groupBy = options.groupBy ?? 'none';
  const choice = options.binning ?? DEFAULT_BINNING_CHOICE;
  // the bins on the labelled frames the figures are computed from (equal-mass capped at their count)
  const chosenSpec = binningOfChoice(choice, run.scores?.sampleCount ?? choice.bins);
  const chosenFigure = chosenFigureIdentity(choice, chosenSpec);
  const base = {
    recordingId: computedFrom.recordingId,
    settingsVersion: computedFrom.version,
    calibrator: computedFrom.calibrator === null ? null : describeCalibrator(computedFrom.calibrator),
    frameCount: run.trace.frameCount,
    window: run.window,
    groupBy,
    binning: {
      choice,
      identity: binningIdentity(chosenSpec),
      name: chosenFigure.name,
      figureIdentity: chosenFigure.identity,
      label: chosenFigureLabel(choice, chosenSpec),
    },
    // a kept-class trace says so even on a window with no labelled frame (nothing unsettled then)
    ...(run.trace.keptClasses === undefined
      ? {}
      : {
          kept: {
            description: keptClassesText({ keep: run.trace.keptClasses.keep, classCount: run.trace.classCount }),
            unsettledFrames: run.kept?.bounds.unsettledFrames ?? 0,
          },
        }),
  };
  if (run.scores === null || run.top === null || statistics === null || suite === null) {
    return {
      ...base,
      labelledFrameCount: 0,
      values: [],
      intervals: [],
      reliability: null,
      classReliability: [],
      smooth: null,
      histogram: null,
      tce: null,
      groups: [],
      computeMs: performance.now() - started,
    };
  }
  const { scores, top } = run;
  const resampled = (options.detail ?? 'full') === 'full';
  const smooth = resampled
    ? smoothReliabilityCurve(top.confidence, top.correct, { meshPoints: 51, replicates: 50, signal })
    : null;
  const histogram = confidenceHistogram(top.confidence, 20);
  const tce = resampled ? tceEntry(top) : null;
  const { classwise } = suite;
  const classBins = classDiagramBins(viewBinnings(scores.sampleCount, choice), chosenSpec);
  return {
    ...base,
    labelledFrameCount: run.frames.length,
    values: keptBounds(run, [
      ...suite.values,
      ...(tce !== null
        ? [tceValue(tce)]
        : resampled && scores.sampleCount <= TCE_DEFAULT_MIN_BIN_SIZE
          ? [tceNotEnoughFrames(scores.sampleCount)]
          : []),
    ]).map(entry),
    intervals: resampled
      ? keptIntervalNotes(run, [
          ...intervalEntries(bootstrapIntervalsOf(statistics, scores.sampleCount, { signal })),
          ...l2CeIntervals(top, signal),
        ])
      : [],
    reliability: diagramEntry(reliabilityDiagram(top.confidence, top.correct, chosenSpec)),
    classReliability:
      classwise === undefined ? [] : classDiagrams(classwise[classBins.at]!, classBins.spec, run.trace.labelNames),
    smooth: smooth === null ? null : smoothCurveArrays(smooth),
    histogram: {
      identity: 'confidence histogram(top-label, 20 equal-width bins, [lo,hi) last closed)',
      edges: Array.from(histogram.edges),
      counts: Array.from(histogram.counts),
    },
    tce,
    groups: groups(run, groupBy, resampled, signal),
    computeMs: performance.now() - started,
  };
}

/**
 * A kept-class trace's metrics with how far the full trace's may lie (kept-class-bounds.ts, the
 * same words as `knob metrics --trace`); any other trace's as they are.
 */
function keptBounds(run: Replayed, metrics: MetricValue[]): MetricValue[] {
  return run.kept === undefined ? metrics : withKeptClassBounds(metrics, run.kept.bounds, run.kept);
}

/**
 * A kept-class trace's intervals resample its estimates: each says so, and that its metric's bound
 * adds to it (a group's figures have none).
 */
function keptIntervalNotes(
  run: Replayed,
  intervals: Snapshot['intervals'],
  bound = "the metric's stated bound against the full trace adds to it",
): Snapshot['intervals'] {
  if (run.kept === undefined) return intervals;
  const note = `resamples the estimates from ${keptClassesText(run.kept)}; ${bound}`;
  return intervals.map((i) => ({ ...i, note: i.note === undefined ? note : `${i.note}; ${note}` }));
}

/** A snapshot's replay: its window, calibrator and classes, in the source's buffer kept between views. */
function snapshotRun(
  recorded: TraceSource,
  settings: GateSettings,
  computedFrom: ViewBasis,
  options: Partial<MetricsOptions>,
  onProgress: TableProgress | undefined,
  signal: CancelSignal | undefined,
): Replayed {
  return replayedView(recorded, settings, options.lastFrames, {
    calibrator: computedFrom.calibrator,
    everyClass: options.classes,
    onProgress,
    scratch: recorded.scratch,
    signal,
  });
}

export function metricsSnapshot(
  recorded: TraceSource,
  settings: GateSettings,
  computedFrom: ViewBasis,
  options: Partial<MetricsOptions> = {},
  onProgress?: TableProgress,
  signal?: CancelSignal,
): Snapshot {
  const started = performance.now();
  const run = snapshotRun(recorded, settings, computedFrom, options, onProgress, signal);
  const choice = options.binning ?? DEFAULT_BINNING_CHOICE;
  const statistics = run.scores === null ? null : viewStatistics(run.scores, run.top!, choice);
  return snapshotOf(run, statistics, computedFrom, options, started, undefined, signal);
}

/**
 * metricsSnapshot with the suite's top-label tasks on a second thread (the metrics worker's
 * knob turn: both cores): the same snapshot.
 */
export async function metricsSnapshotOnTwoThreads(
  recorded: TraceSource,
  settings: GateSettings,
  computedFrom: ViewBasis,
  options: Partial<MetricsOptions>,
  onProgress: TableProgress | undefined,
  parallel: ParallelMetricSuite,
  signal?: CancelSignal,
): Promise<Snapshot> {
  const started = performance.now();
  // a long recording's first knob-turn view: its fused-score table built on both threads
  const temperature = tablePathTemperature(recorded, recorded.view(), {
    calibrator: computedFrom.calibrator,
    everyClass: options.classes,
  });
  if (temperature !== null && recorded.tableOnTwoThreads !== undefined)
    await recorded.tableOnTwoThreads(temperature, true, (request) => parallel.tableRows(request), onProgress, signal);
  const run = snapshotRun(recorded, settings, computedFrom, options, onProgress, signal);
  if (run.scores === null) return snapshotOf(run, null, computedFrom, options, started, null);
  const choice = options.binning ?? DEFAULT_BINNING_CHOICE;
  const suite = await suiteAlongside(run.scores, run.top!, run.everyClass, parallel, choice);
  stopIfCancelled(signal, 'the calibration view was cancelled');
  const statistics = viewStatistics(run.scores, run.top!, choice);
  return snapshotOf(run, statistics, computedFrom, options, started, suite, signal);
}

/** A/B: the same frames replayed at two settings, both snapshots, and B - A with paired intervals. */
export function compareSnapshots(
  recorded: TraceSource,
  a: GateSettings,
  b: GateSettings,
  computedFrom: ViewBasis,
  lastFrames: number | undefined,
  /** Polled between resamples: a cancelled comparison stops with CANCELLED. */
  signal?: CancelSignal,
  binning: BinningChoice = DEFAULT_BINNING_CHOICE,
): Comparison {
  // the paired differences of two kept-class estimates would have no stated bound
  requireEveryClass(recorded.view(), 'the A/B comparison');
  const started = performance.now();
  const runA = replayedView(recorded, a, lastFrames, { calibrator: computedFrom.calibrator, signal });
  const runB = replayedView(recorded, b, lastFrames, { calibrator: computedFrom.calibrator, signal });
  const statisticsA = runA.scores === null ? null : viewStatistics(runA.scores, runA.top!, binning);
  const statisticsB = runB.scores === null ? null : viewStatistics(runB.scores, runB.top!, binning);
  const differences =
    statisticsA === null || statisticsB === null
      ? []
      : pairedDifferences(statisticsA, statisticsB, runA.frames.length, { signal }).map(differenceEntry);
  const options = { lastFrames, groupBy: 'none' as const, detail: 'full' as const, binning };
  return {
    a: snapshotOf(runA, statisticsA, computedFrom, options, started, undefined, signal),
    b: snapshotOf(runB, statisticsB, computedFrom, options, started, undefined, signal),
    differences,
  };
}
