import { CORRUPTION_NAMES, SEVERITIES, type CorruptionName } from '../../../src-shared/corruptions';
import { KnobError } from '../../../src-shared/errors';
import { GATE_VARIANT_LABELS, GATE_VARIANTS, type GateSettings } from '../../../src-shared/gate/gate-settings';
import { topLabelBinnedMetrics } from '../../../src-shared/metrics/binned-metrics';
import { EQUAL_MASS_15 } from '../../../src-shared/metrics/metric-suite';
import {
  notEnoughFrames,
  unavailableText,
  type MetricValue,
  type NotEnoughFrames,
} from '../../../src-shared/metrics/metric-value';
import { topLabelScores } from '../../../src-shared/metrics/scores';
import {
  headlineStatistics,
  meanOverGroups,
  meanOfGroupValues,
  type HeadlineStatistic,
} from '../../../src-shared/metrics/headline-intervals';
import { replay } from '../../../src-shared/trace/replay';
import type { Trace } from '../../../src-shared/trace/trace';
import { labelledFrames, scoresOfFrames } from '../../../src-shared/trace/trace-scores';
import type { InferenceClient } from '../inference/inference-client';
import { openSource } from '../sources/open-source';
import { runOffline } from './offline-run';

/**
 * The comparison of the paper's Table 2 on Fashion-MNIST-C, in reset mode: the model runs once per
 * corruption x severity (the first `imagesPerCondition` test images, seeded corruptions), then each
 * method is a pure function of those traces: Static (z_static), Dynamic (z_dyn), and the three gate
 * variants fused at the given settings in reset mode. Figures are means over the conditions of the
 * per-condition values. Latency per frame = the model's inference per frame (batched, as measured
 * in this run) + the method's gate + fusion time per frame (none for Static and Dynamic).
 * With `intervals`, accuracy, ECE and NLL carry 95 % intervals of the mean over conditions, each
 * labelled with its own method (meanOverGroups): accuracy Wilson's (Kish's effective n), ECE the
 * stratified bias-corrected basic bootstrap, NLL the stratified percentile bootstrap (each
 * condition's frames resampled within it). The debiased L2-CE needs at least 15 frames per
 * condition (its 15 equal-mass bins): with fewer it is null and `unavailable` says why.
 */
export const TABLE_METRIC_IDENTITIES = {
  ece: 'ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)',
  debiasedL2Ce: 'debiased L2-CE (Kumar et al. 2019, top-label, 15 equal-mass bins)',
  nll: 'NLL (natural log, from logits)',
};

export interface TableRow {
  method: string;
  accuracy: number;
  error: number;
  /** Null when a condition has fewer frames than its 15 equal-mass bins (`unavailable` says so). */
  debiasedL2Ce: number | null;
  ece: number;
  nll: number;
  latencyMsPerFrame: number;
  /** 95 % intervals of the means over conditions, each with its own method (with `intervals`). */
  intervals?: { accuracy: Interval; ece: Interval; nll: Interval };
  /** The figures not computed, and why. */
  unavailable?: { debiasedL2Ce: NotEnoughFrames };
}

export interface Interval {
  lo: number;
  hi: number;
  /** The exact variant: level, method, resamples, seed (or Wilson's effective n). */
  method: string;
  /** Set when the interval was widened to contain its estimate, saying why. */
  note?: string;
}

export interface ResetTable {
  settings: GateSettings;
  conditions: number;
  imagesPerCondition: number;
  corruptions: readonly string[];
  identities: typeof TABLE_METRIC_IDENTITIES;
  rows: TableRow[];
}

interface Figures {
  /** NaN with `unavailable` on fewer frames than its bins. */
  debiasedL2Ce: MetricValue;
  /** The condition's accuracy, NLL, Brier and ECE as resample statistics (the rows' means and intervals). */
  statistics: HeadlineStatistic[];
  sampleCount: number;
}

function figures(trace: Trace, logits: Float32Array | Float64Array): Figures {
  const scores = scoresOfFrames(trace, logits, labelledFrames(trace));
  const top = topLabelScores(scores);
  return {
    debiasedL2Ce:
      scores.sampleCount < EQUAL_MASS_15.bins
        ? notEnoughFrames(
            'debiased L2-CE',
            TABLE_METRIC_IDENTITIES.debiasedL2Ce,
            EQUAL_MASS_15.bins,
            scores.sampleCount,
          )
        : topLabelBinnedMetrics(top, EQUAL_MASS_15).find((m) => m.name === 'debiased L2-CE')!,
    statistics: headlineStatistics(scores, top),
    sampleCount: scores.sampleCount,
  };
}

export interface ResetTableOptions {
  client: InferenceClient;
  settings: GateSettings;
  imagesPerCondition: number;
  corruptions?: readonly CorruptionName[];
  batchSize?: number;
  seed?: number;
  /** Add 95 % stratified bootstrap intervals to accuracy, ECE and NLL. */
  intervals?: boolean;
  onProgress?: (done: number, total: number, label: string) => void;
}

export async function resetModeTable(options: ResetTableOptions): Promise<ResetTable> {
  const settings = { ...options.settings, mode: 'reset' as const };
  const corruptions = options.corruptions ?? CORRUPTION_NAMES;
  const model = options.client.description;
  const source = await openSource({ kind: 'embedded' }, { target: model.input, labelNames: model.labelNames });
  const methods = ['Static', 'Dynamic', ...GATE_VARIANTS.map((v) => GATE_VARIANT_LABELS[v])];
  const sums = methods.map(() => ({ debiasedL2Ce: 0, gateMs: 0 }));
  // the fewest frames a condition had where the debiased L2-CE needed more (null: none short)
  const short = methods.map((): NotEnoughFrames | null => null);
  const keep = options.intervals === true;
  // each condition's headline values (the rows' means); its statistics and frame counts only for
  // the intervals (a statistic holds its per-frame terms: ~29 bytes a frame)
  const perCondition = methods.map(() => ({
    names: [] as string[],
    values: [] as number[][],
    statistics: [] as HeadlineStatistic[][],
    counts: [] as number[],
  }));
  let inferenceMs = 0;
  let frames = 0;
  let conditions = 0;
  const total = corruptions.length * SEVERITIES.length;
  for (const corruption of corruptions) {
    for (const severity of SEVERITIES) {
      options.onProgress?.(conditions, total, `${corruption} ${severity}`);
      const run = await runOffline({
        client: options.client,
        source,
        schedule: { kind: 'constant', corruption, severity },
        streamSeed: options.seed ?? 0,
        settings,
        batchSize: options.batchSize ?? 250,
        maxFrames: options.imagesPerCondition,
      });
      if (run.error !== null)
        throw new KnobError(run.error.code, `${corruption} severity ${severity}: ${run.error.message}`);
      inferenceMs += (run.latencyPerFrame.inference?.meanMs ?? 0) * run.framesProcessed;
      frames += run.framesProcessed;
      const perMethod: Array<{ figures: Figures; gateMs: number }> = [
        { figures: figures(run.trace, run.trace.zStatic), gateMs: 0 },
        { figures: figures(run.trace, run.trace.zDyn), gateMs: 0 },
        ...GATE_VARIANTS.map((variant) => {
          const started = performance.now();
          const output = replay(run.trace, { ...settings, variant }, { keepFusedLogits: true });
          const gateMs = performance.now() - started;
          return { figures: figures(run.trace, output.fusedLogits!), gateMs };
        }),
      ];
      perMethod.forEach((m, i) => {
        sums[i].debiasedL2Ce += m.figures.debiasedL2Ce.value;
        const unavailable = m.figures.debiasedL2Ce.unavailable;
        // the table's figures are top-label: only ever short of frames
        if (unavailable?.reason === 'not enough frames' && (short[i] === null || unavailable.got < short[i].got))
          short[i] = unavailable;
        sums[i].gateMs += m.gateMs;
        perCondition[i].names = m.figures.statistics.map((s) => s.name);
        perCondition[i].values.push(m.figures.statistics.map((s) => s.evaluate(null)));
        if (keep) {
          perCondition[i].statistics.push(m.figures.statistics);
          perCondition[i].counts.push(m.figures.sampleCount);
        }
      });
      conditions++;
    }
  }
  options.onProgress?.(total, total, 'done');
  const inferencePerFrame = inferenceMs / frames;
  return {
    settings,
    conditions,
    imagesPerCondition: options.imagesPerCondition,
    corruptions,
    identities: TABLE_METRIC_IDENTITIES,
    rows: methods.map((method, i) => {
      // the means over conditions the intervals are built around (meanOverGroups), so they contain them
      const means = meanOfGroupValues(perCondition[i].values);
      const mean = (name: string) => means[perCondition[i].names.indexOf(name)]!;
      const row: TableRow = {
        method,
        accuracy: mean('accuracy'),
        error: 1 - mean('accuracy'),
        debiasedL2Ce: short[i] === null ? sums[i].debiasedL2Ce / conditions : null,
        ece: mean('ECE'),
        nll: mean('NLL'),
        latencyMsPerFrame: inferencePerFrame + sums[i].gateMs / frames,
        intervals: keep ? rowIntervals(perCondition[i].statistics, perCondition[i].counts) : undefined,
      };
      return short[i] === null ? row : { ...row, unavailable: { debiasedL2Ce: short[i] } };
    }),
  };
}

/** Each figure's interval with its own method (accuracy Wilson's, ECE and NLL their bootstraps'). */
function rowIntervals(statistics: HeadlineStatistic[][], counts: number[]): TableRow['intervals'] {
  const figures = meanOverGroups(statistics, counts);
  const of = (name: string): Interval => {
    const figure = figures.find((f) => f.name === name)!;
    const interval = { lo: figure.lo, hi: figure.hi, method: figure.method };
    return figure.note === undefined ? interval : { ...interval, note: figure.note };
  };
  return { accuracy: of('accuracy'), ece: of('ECE'), nll: of('NLL') };
}

export function resetTableMarkdown(table: ResetTable): string {
  const s = table.settings;
  const lines = [
    `Fashion-MNIST-C, reset mode (tau ${s.tauSeconds} s, g0 ${s.g0}; zeta ${s.zeta}, wn ${s.wnRadPerSec} rad/s, ${s.discretization}); mean over ${table.conditions} corruption x severity conditions, ${table.imagesPerCondition} test images each.`,
    '',
    '| method | accuracy | error | debiased L2-CE | ECE | NLL | latency / frame |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...table.rows.map((r) => {
      const i = r.intervals;
      const range = (interval: Interval | undefined, format: (v: number) => string) =>
        interval ? ` [${format(interval.lo)}, ${format(interval.hi)}]` : '';
      const pct = (v: number) => (v * 100).toFixed(2);
      const four = (v: number) => v.toFixed(4);
      const l2 = r.debiasedL2Ce === null ? '—' : four(r.debiasedL2Ce);
      return `| ${r.method} | ${pct(r.accuracy)} %${range(i?.accuracy, pct)} | ${pct(r.error)} % | ${l2} | ${four(r.ece)}${range(i?.ece, four)} | ${four(r.nll)}${range(i?.nll, four)} | ${(r.latencyMsPerFrame * 1000).toFixed(2)} µs |`;
    }),
    '',
    `debiased L2-CE: ${table.identities.debiasedL2Ce}; ECE: ${table.identities.ece}; NLL: ${table.identities.nll}.`,
    ...shortLines(table.rows),
    ...intervalLines(table.rows),
    "Latency: batched inference per frame in this run plus the method's gate + fusion per frame.",
  ];
  return `${lines.join('\n')}\n`;
}

/** The figures not computed ('—' in the table), and why. */
function shortLines(rows: TableRow[]): string[] {
  const short = rows.find((r) => r.unavailable !== undefined)?.unavailable;
  return short === undefined
    ? []
    : [`debiased L2-CE not computed (—): ${unavailableText(short.debiasedL2Ce)} frames per condition.`];
}

/** Each figure's interval method (the first row's: every row's are alike), and any widened interval's note. */
function intervalLines(rows: TableRow[]): string[] {
  const first = rows[0]?.intervals;
  if (first === undefined) return [];
  const notes = rows.flatMap((r) =>
    (['accuracy', 'ece', 'nll'] as const).flatMap((f) =>
      r.intervals?.[f].note === undefined ? [] : [`${r.method} ${FIGURE_NAMES[f]}: ${r.intervals[f].note}.`],
    ),
  );
  return [
    `Intervals in brackets: accuracy, ${first.accuracy.method}; ECE, ${first.ece.method}; NLL, ${first.nll.method}.`,
    ...notes,
  ];
}

const FIGURE_NAMES = { accuracy: 'accuracy', ece: 'ECE', nll: 'NLL' } as const;
