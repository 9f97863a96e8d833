import type { ApiResult, MetricsOptions } from '../../../src-shared/api/contract';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { gateBuckets, groupedMetrics } from '../../../src-shared/metrics/grouped';
import { headlineIntervals } from '../../../src-shared/metrics/headline-intervals';
import { EQUAL_WIDTH_15, metricSuite } from '../../../src-shared/metrics/metric-suite';
import type { MetricValue } from '../../../src-shared/metrics/metric-value';
import { accuracy, negativeLogLikelihood } from '../../../src-shared/metrics/proper-scores';
import {
  confidenceHistogram,
  reliabilityDiagram,
  smoothReliabilityCurve,
} from '../../../src-shared/metrics/reliability';
import { topLabelBinnedMetrics } from '../../../src-shared/metrics/binned-metrics';
import { scoresFromLogits, topLabelScores, type ClassScores } from '../../../src-shared/metrics/scores';
import { replay } from '../../../src-shared/trace/replay';
import type { Trace } from '../../../src-shared/trace/trace';
import { sliceTrace } from '../../../src-shared/trace/trace-slice';
import { labelledFrames, scoresOfFrames } from '../../../src-shared/trace/trace-scores';

/**
 * What the desk's calibration panel shows for one trace and one setting, computed by replay (no
 * model call): every metric of the suite with identities, bootstrap intervals of the headline
 * values, the reliability diagram, the smooth reliability curve with its band, the confidence
 * histogram, and the headline values per group (severity, corruption, predicted class, gate bucket).
 */
export type Snapshot = ApiResult<'metrics.snapshot'>;

const finite = (v: number | null): number | null => (v !== null && Number.isFinite(v) ? v : null);
const entry = (m: MetricValue) => ({ name: m.name, identity: m.identity, value: finite(m.value) });

function headline(scores: ClassScores): MetricValue[] {
  const top = topLabelScores(scores);
  return [
    accuracy(top),
    negativeLogLikelihood(scores),
    ...topLabelBinnedMetrics(top, EQUAL_WIDTH_15).filter((m) => m.name === 'ECE'),
  ];
}

/** The last `lastFrames` frames of a trace (all when absent), as a trace of its own. */
function windowOf(trace: Trace, lastFrames: number | undefined): Trace {
  if (lastFrames === undefined || lastFrames >= trace.frameCount) return trace;
  return sliceTrace(trace, trace.frameCount - lastFrames, trace.frameCount, 'view');
}

export function metricsSnapshot(
  recorded: Trace,
  settings: GateSettings,
  computedFrom: { version: number; recordingId: number },
  options: Partial<MetricsOptions> = {},
): Snapshot {
  const started = performance.now();
  const trace = windowOf(recorded, options.lastFrames);
  const groupBy = options.groupBy ?? 'none';
  const window = trace === recorded ? 'all recorded frames' : `last ${trace.frameCount} recorded frames`;
  const frames = labelledFrames(trace);
  const empty: Snapshot = {
    recordingId: computedFrom.recordingId,
    settingsVersion: computedFrom.version,
    frameCount: trace.frameCount,
    labelledFrameCount: 0,
    window,
    values: [],
    intervals: [],
    reliability: null,
    smooth: null,
    histogram: null,
    groupBy,
    groups: [],
    computeMs: 0,
  };
  if (frames.length === 0) return { ...empty, computeMs: performance.now() - started };
  const output = replay(trace, settings, { keepFusedLogits: true });
  const fused = output.fusedLogits!;
  const scores = scoresOfFrames(trace, fused, frames);
  const top = topLabelScores(scores);
  const resampled = (options.detail ?? 'full') === 'full';
  const intervals = resampled
    ? Object.entries(headlineIntervals(scores, top)).map(([identity, i]) => ({
        identity,
        lo: i.lo,
        hi: i.hi,
        method: i.identity,
      }))
    : [];
  const diagram = reliabilityDiagram(top.confidence, top.correct, EQUAL_WIDTH_15);
  const smooth = resampled
    ? smoothReliabilityCurve(top.confidence, top.correct, { meshPoints: 51, replicates: 50 })
    : null;
  const histogram = confidenceHistogram(top.confidence, 20);

  // Group keys per labelled frame.
  let groups: Snapshot['groups'] = [];
  if (groupBy !== 'none') {
    const keys = new Int32Array(frames.length);
    let name: (code: number) => string = String;
    if (groupBy === 'severity' || groupBy === 'corruption') {
      const column = trace.metadata[groupBy];
      if (column?.kind === 'category') {
        frames.forEach((f, j) => (keys[j] = column.codes[f]));
        name = (code) => column.dictionary[code] ?? String(code);
      } else if (column?.kind === 'number') {
        frames.forEach((f, j) => (keys[j] = column.values[f]));
        name = (code) => `severity ${code}`;
      }
    } else if (groupBy === 'predicted-class') {
      frames.forEach((_, j) => (keys[j] = top.predicted[j]));
      name = (code) => trace.labelNames[code] ?? String(code);
    } else {
      const buckets = gateBuckets(output.g, 3);
      frames.forEach((f, j) => (keys[j] = buckets[f]));
      name = (code) => ['g in [0, 1/3)', 'g in [1/3, 2/3)', 'g in [2/3, 1]'][code] ?? String(code);
    }
    const k = trace.classCount;
    groups = groupedMetrics(keys, name, (indices) => {
      const logits = new Float64Array(indices.length * k);
      const labels = new Int32Array(indices.length);
      indices.forEach((j, r) => {
        const f = frames[j];
        for (let c = 0; c < k; c++) logits[r * k + c] = fused[f * k + c];
        labels[r] = trace.labels![f];
      });
      return headline(scoresFromLogits(logits, k, labels));
    }).map((g) => ({ key: g.key, count: g.count, values: g.metrics.map(entry) }));
  }

  return {
    recordingId: computedFrom.recordingId,
    settingsVersion: computedFrom.version,
    frameCount: trace.frameCount,
    labelledFrameCount: frames.length,
    window,
    values: metricSuite(scores).map(entry),
    intervals,
    reliability: {
      identity: diagram.identity,
      bins: diagram.bins.map((b) => ({
        lo: b.lo,
        hi: b.hi,
        count: b.count,
        meanConfidence: finite(b.meanConfidence),
        accuracy: finite(b.accuracy),
        gap: finite(b.gap),
        wilsonLo: finite(b.wilsonLo),
        wilsonHi: finite(b.wilsonHi),
      })),
    },
    smooth:
      smooth === null
        ? null
        : {
            identity: smooth.identity,
            t: Array.from(smooth.t),
            accuracy: Array.from(smooth.accuracy),
            bandLo: Array.from(smooth.bandLo),
            bandHi: Array.from(smooth.bandHi),
          },
    histogram: {
      identity: 'confidence histogram(top-label, 20 equal-width bins, [lo,hi) last closed)',
      edges: Array.from(histogram.edges),
      counts: Array.from(histogram.counts),
    },
    groupBy,
    groups,
    computeMs: performance.now() - started,
  };
}
