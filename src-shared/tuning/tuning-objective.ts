import { KnobError } from '../errors';
import { fuseRowInto } from '../fusion/convex-fusion';
import type { LogitArray } from '../fusion/logits';
import { runGate } from '../gate/gate-kernel';
import type { GateSettings } from '../gate/gate-settings';
import { createGateState, resetGateState, type GateState } from '../gate/gate-state';
import { binningIdentity } from '../metrics/binning';
import { classwiseMetricsFromStatistics } from '../metrics/binned-metrics';
import { expectedCalibrationError } from '../metrics/calibration-error';
import { binnedStatistics, classwiseBinnedStatistics } from '../metrics/column-statistics';
import { ECE_15_IDENTITY, ece15OfResample, type HeadlineStatistic } from '../metrics/headline-intervals';
import { EQUAL_MASS_15, EQUAL_WIDTH_15 } from '../metrics/metric-suite';
import { NLL_FROM_LOGITS } from '../metrics/proper-scores';
import { FusedRowScorer } from '../metrics/fused-row-scorer';
import { allocateTopLabelScores, scoreRowsInto, type TopLabelScores } from '../metrics/scores';
import { resample } from '../metrics/bootstrap';
import { smoothEce } from '../metrics/smooth-ece';
import type { Trace } from '../trace/trace';
import { FusedScoreTable, labelLogitsOf, type FusedFrameScores, type LabelLogits } from '../fusion/fused-score-table';
import { entriesOf, tablesNeedSquares, usesFusedTables, type FusedTables } from './fused-tables';

/**
 * The tuner's objective (issue 17): a calibration metric of the fused output on the evaluation
 * frames of a trace, at one setting, by replay. The gate runs over the trace from its start (in
 * continuous mode the frames before the evaluation part carry its state in), the evaluation frames'
 * logits are fused (optionally divided by a temperature: the temperature-scaling calibrator) and
 * scored by the metric suite's own row pass (scoreRowsInto), so a figure here is the one the desk
 * shows for the same frames. With many classes (fused-tables.ts) the frames are scored from their
 * fused-score tables instead, in O(1) a frame, to the same figure within 1e-12, and no K-wide
 * buffer is held. Every buffer is allocated once per evaluator: evaluating a setting allocates
 * nothing per frame.
 */
export const TUNING_METRICS = ['ece', 'ece-equal-mass', 'classwise-ece', 'nll', 'brier', 'smooth-ece'] as const;
/** The metrics of the top-label pairs alone (no NLL, Brier or probabilities read). */
const TOP_LABEL_METRICS: ReadonlySet<string> = new Set(['ece', 'ece-equal-mass', 'smooth-ece']);
export type TuningMetric = (typeof TUNING_METRICS)[number];

/** Each metric's exact variant, as the metric suite names it. */
export const TUNING_METRIC_IDENTITIES: Record<TuningMetric, string> = {
  ece: ECE_15_IDENTITY,
  'ece-equal-mass': `ECE(top-label, ${binningIdentity(EQUAL_MASS_15)}, L1)`,
  'classwise-ece': `ECE(classwise, ${binningIdentity(EQUAL_WIDTH_15)} per class, L1, mean over K classes)`,
  nll: NLL_FROM_LOGITS,
  brier: 'Brier(multiclass, sum over classes, mean over samples, range [0, 2])',
  'smooth-ece': 'SmoothECE(top-label, reflected Gaussian kernel, automatic bandwidth, relplot grid)',
};

/** What the tuner varies: the gate settings and the output temperature (1: none). */
export interface TuningPoint {
  settings: GateSettings;
  temperature: number;
}

/** Per-frame scores of the evaluation frames at one setting (views of the evaluator's buffers). */
interface EvaluationScores {
  probabilities: Float64Array;
  sampleNll: Float64Array;
  sampleBrier: Float64Array;
  top: TopLabelScores;
}

export class TuningObjective {
  /** The labelled frames it scores, increasing. */
  readonly frames: Int32Array;
  readonly metric: TuningMetric;
  private readonly trace: Trace;
  private readonly lastFrame: number;
  private readonly g: Float64Array;
  private readonly v: Float64Array;
  private readonly state: GateState;
  private readonly fused: Float64Array;
  private readonly labels: Int32Array;
  private readonly scores: EvaluationScores;
  /** With tables: the given ones (entries `entries`), and any built here for another temperature. */
  private readonly tables: FusedTables | null;
  private readonly entries: Int32Array | null;
  private readonly ownTables = new Map<number, FusedScoreTable>();
  private readonly tableScores: FusedFrameScores | null;
  private readonly labelLogits: LabelLogits | null;
  private readonly rowScorer: FusedRowScorer | null;
  /** The row scorer's logits: the trace's, or the frames' rows gathered in order (rowLogitsOf). */
  private readonly rowLogits: RowLogits | null;

  /**
   * `frames`: labelled frame indices, increasing. `tables`: fused-score tables covering `frames`
   * (the pool's, built once for every thread); with many classes and none given, the objective
   * builds its own. `scoring`: 'full-vectors' always fuses and scores the K logits (the exact
   * reference the tables are held to, and the benchmarks' baseline).
   */
  constructor(
    trace: Trace,
    frames: Int32Array,
    metric: TuningMetric,
    tables: FusedTables | null = null,
    scoring: 'auto' | 'full-vectors' = 'auto',
  ) {
    const n = frames.length;
    if (n === 0) throw new KnobError('INVALID_INPUT', 'the tuner has no labelled frames to evaluate on');
    if (trace.labels === null) throw new KnobError('INVALID_INPUT', 'the trace has no labels: nothing to tune against');
    const k = trace.classCount;
    this.labels = new Int32Array(n);
    for (let j = 0; j < n; j++) {
      const frame = frames[j]!;
      if (j > 0 && frame <= frames[j - 1]!)
        throw new KnobError('INVALID_INPUT', 'evaluation frames must be increasing');
      const label = trace.labels[frame]!;
      if (!(label >= 0 && label < k))
        throw new KnobError('INVALID_INPUT', `evaluation frame ${frame} has no label in 0..${k - 1}`);
      this.labels[j] = label;
    }
    this.trace = trace;
    this.frames = frames;
    this.metric = metric;
    this.lastFrame = frames[n - 1]!;
    this.g = new Float64Array(this.lastFrame + 1);
    this.v = new Float64Array(this.lastFrame + 1);
    this.state = createGateState(0.5);
    const tabled = scoring === 'auto' && usesFusedTables(metric, k);
    // only classwise ECE needs every frame's probabilities (and fused logits) at once; every other
    // metric is scored a chunk of rows at a time (FusedRowScorer) or from the tables
    const everyClass = metric === 'classwise-ece';
    this.fused = new Float64Array(everyClass ? n * k : 0);
    this.rowScorer = everyClass || tabled ? null : new FusedRowScorer(k);
    this.rowLogits = this.rowScorer === null ? null : rowLogitsOf(trace, frames);
    this.scores = {
      probabilities: new Float64Array(everyClass ? n * k : 0),
      sampleNll: new Float64Array(n),
      sampleBrier: new Float64Array(n),
      top: allocateTopLabelScores(n),
    };
    this.tables = tabled ? tables : null;
    this.entries = this.tables === null ? null : entriesOf(this.tables, frames);
    this.tableScores = tabled
      ? { ...this.scores.top, sampleNll: this.scores.sampleNll, sampleBrier: this.scores.sampleBrier }
      : null;
    this.labelLogits = !tabled
      ? null
      : this.tables === null
        ? labelLogitsOf(trace, frames, this.labels)
        : pick(this.tables.labelLogits, this.entries!);
  }

  /** The table of the frames at `temperature`, and the entries to score in it. */
  private tableAt(temperature: number): { table: FusedScoreTable; entries: Int32Array } {
    const given = this.tables?.byTemperature.get(temperature);
    if (given !== undefined && (given.squares || !tablesNeedSquares(this.metric)))
      return { table: given, entries: this.entries! };
    let own = this.ownTables.get(temperature);
    if (own === undefined) {
      if (this.trace.zStatic.length < this.trace.frameCount * this.trace.classCount)
        throw new Error(`no fused-score table at temperature ${temperature}, and no logits to build one from`);
      own = new FusedScoreTable(this.trace.classCount, temperature, tablesNeedSquares(this.metric));
      own.extend(this.trace, this.frames);
      this.ownTables.set(temperature, own);
    }
    return { table: own, entries: Int32Array.from({ length: this.frames.length }, (_, j) => j) };
  }

  /** The metric at `point` (lower is better for every tuning metric). */
  evaluate(point: TuningPoint): number {
    this.scoreAt(point);
    return metricOf(this.metric, this.scores, this.labels, this.trace.classCount, null);
  }

  /**
   * The metric at `point` as a resample statistic, over copies of its per-frame scores (for the
   * paired bootstrap of the improvement; the evaluator's buffers are reused by the next call).
   */
  statisticAt(point: TuningPoint): HeadlineStatistic {
    this.scoreAt(point);
    const kept: EvaluationScores = {
      probabilities: this.scores.probabilities.slice(),
      sampleNll: this.scores.sampleNll.slice(),
      sampleBrier: this.scores.sampleBrier.slice(),
      top: {
        confidence: this.scores.top.confidence.slice(),
        predicted: this.scores.top.predicted.slice(),
        correct: this.scores.top.correct.slice(),
      },
    };
    const { labels, metric } = this;
    const k = this.trace.classCount;
    return {
      name: metric,
      identity: TUNING_METRIC_IDENTITIES[metric],
      lowerIsBetter: true,
      // ECE as the headline figures resample it (fixed bins, the replicate's draws counted: fixed-bin-resamples.ts)
      evaluate: metric === 'ece' ? ece15OfResample(kept.top) : (indices) => metricOf(metric, kept, labels, k, indices),
    };
  }

  private scoreAt({ settings, temperature }: TuningPoint): void {
    if (!(temperature > 0 && Number.isFinite(temperature)))
      throw new KnobError('INVALID_SETTINGS', `temperature must be positive and finite, got ${temperature}`);
    const { trace, g, v, state, fused, frames } = this;
    const k = trace.classCount;
    resetGateState(state, settings.g0);
    runGate(settings, trace, 0, this.lastFrame + 1, state, { g, v });
    if (this.tableScores !== null) {
      const { table, entries } = this.tableAt(temperature);
      const parts = { nll: this.metric === 'nll', brier: this.metric === 'brier' };
      table.scoresInto(this.labelLogits!, g, entries, this.labels, this.tableScores, parts);
      return;
    }
    const inverse = 1 / temperature;
    if (this.rowScorer !== null) {
      const { zStatic, zDyn, byRow } = this.rowLogits!;
      if (TOP_LABEL_METRICS.has(this.metric))
        this.rowScorer.topLabelInto(zStatic, zDyn, g, frames, this.labels, inverse, this.scores.top, byRow);
      else this.rowScorer.scoreInto(zStatic, zDyn, g, frames, this.labels, inverse, this.scores, byRow);
      return;
    }
    for (let j = 0; j < frames.length; j++) {
      const frame = frames[j]!;
      fuseRowInto(trace.zStatic, trace.zDyn, frame * k, k, g[frame]!, fused, j * k);
      if (inverse !== 1) for (let c = j * k; c < (j + 1) * k; c++) fused[c]! *= inverse;
    }
    scoreRowsInto(fused, this.labels, k, 0, frames.length, this.scores);
  }
}

/**
 * The objectives of a tune's two frame sets (tuningFrames: the search frames, and the stride of
 * them a long recording's search is screened on), each built when it is first evaluated on: the
 * tuner on the calling thread and each of the pool's threads hold one.
 */
export class TuningObjectives {
  private readonly built = new Map<'search' | 'screened', TuningObjective>();

  constructor(
    private readonly trace: Trace,
    private readonly frames: { search: Int32Array; screened: Int32Array | null },
    private readonly metric: TuningMetric,
    private readonly tables: FusedTables | null,
  ) {}

  on(which: 'search' | 'screened'): TuningObjective {
    let objective = this.built.get(which);
    if (objective === undefined) {
      const frames = which === 'search' ? this.frames.search : this.frames.screened;
      if (frames === null) throw new Error('asked to evaluate on screened frames, and the search is not screened');
      objective = new TuningObjective(this.trace, frames, this.metric, this.tables);
      this.built.set(which, objective);
    }
    return objective;
  }
}

interface RowLogits {
  zStatic: LogitArray;
  zDyn: LogitArray;
  /** Row j of the logits is frames[j]'s (gathered); false: frame f's row is f (the trace's own). */
  byRow: boolean;
}

/**
 * The logits the row scorer reads for `frames`: where the frames are spread out (more than half the
 * frames they span are not among them: a screened stride, a trace labelled here and there), their
 * rows gathered once, in order, so that each evaluation reads them in sequence instead of a row
 * here and there (a screened 10-hour tune's settings: 19.9 -> 12.4 ms each, 2026-12-07); the trace's own
 * otherwise. The same values either way.
 */
function rowLogitsOf(trace: Trace, frames: Int32Array): RowLogits {
  const n = frames.length;
  const span = frames[n - 1]! - frames[0]! + 1;
  if (span <= 2 * n) return { zStatic: trace.zStatic, zDyn: trace.zDyn, byRow: false };
  const k = trace.classCount;
  const gathered = (logits: LogitArray): LogitArray => {
    const rows = logits instanceof Float32Array ? new Float32Array(n * k) : new Float64Array(n * k);
    for (let j = 0; j < n; j++) rows.set(logits.subarray(frames[j]! * k, (frames[j]! + 1) * k), j * k);
    return rows;
  };
  return { zStatic: gathered(trace.zStatic), zDyn: gathered(trace.zDyn), byRow: true };
}

function metricOf(
  metric: TuningMetric,
  scores: EvaluationScores,
  labels: Int32Array,
  classCount: number,
  indices: Uint32Array | null,
): number {
  const pick = <T extends Float64Array | Uint8Array>(values: T): T =>
    indices === null ? values : (resample(values, indices) as T);
  switch (metric) {
    case 'nll':
    case 'brier': {
      const values = metric === 'nll' ? scores.sampleNll : scores.sampleBrier;
      let sum = 0;
      if (indices === null) for (let i = 0; i < values.length; i++) sum += values[i]!;
      else for (let i = 0; i < indices.length; i++) sum += values[indices[i]!]!;
      return sum / (indices?.length ?? values.length);
    }
    case 'ece':
    case 'ece-equal-mass':
      return expectedCalibrationError(
        binnedStatistics(
          pick(scores.top.confidence),
          pick(scores.top.correct),
          metric === 'ece' ? EQUAL_WIDTH_15 : EQUAL_MASS_15,
        ),
      );
    case 'smooth-ece':
      return smoothEce(pick(scores.top.confidence), pick(scores.top.correct)).value.value;
    case 'classwise-ece': {
      let probabilities = scores.probabilities;
      let chosenLabels = labels;
      if (indices !== null) {
        probabilities = new Float64Array(indices.length * classCount);
        chosenLabels = new Int32Array(indices.length);
        for (let i = 0; i < indices.length; i++) {
          const from = indices[i]! * classCount;
          probabilities.set(scores.probabilities.subarray(from, from + classCount), i * classCount);
          chosenLabels[i] = labels[indices[i]!]!;
        }
      }
      const [perClass] = classwiseBinnedStatistics(probabilities, chosenLabels, classCount, 0, classCount, [
        EQUAL_WIDTH_15,
      ]);
      return classwiseMetricsFromStatistics(perClass!, binningIdentity(EQUAL_WIDTH_15))[0]!.value;
    }
  }
}

/** The label logits at `entries` (the objective's frames among the tables'). */
function pick(logits: LabelLogits, entries: Int32Array): LabelLogits {
  return {
    zStatic: Float64Array.from(entries, (j) => logits.zStatic[j]!),
    zDyn: Float64Array.from(entries, (j) => logits.zDyn[j]!),
  };
}
