import type { EdgeRule } from '../../../src-shared/metrics/bin-location';
import type { BinningSpec, MassEdges } from '../../../src-shared/metrics/binning';
import { ParallelMetricSuite } from '../../core/metrics/parallel-metric-suite';
import {
  EQUAL_WIDTH_15,
  metricSuite,
  PRESET_NAMES,
  presetMetrics,
  type MetricSuiteOptions,
  type PresetName,
} from '../../../src-shared/metrics/metric-suite';
import { l2CeIntervalsWithBootstrap } from '../../../src-shared/metrics/calibration-error-interval';
import { unavailableText, type MetricValue } from '../../../src-shared/metrics/metric-value';
import { topLabelScores, type ClassScores, type TopLabelScores } from '../../../src-shared/metrics/scores';
import type { LogitArray } from '../../../src-shared/fusion/logits';
import { headlineFigures } from '../../../src-shared/metrics/headline-intervals';
import { keptClassesText, withKeptClassBounds } from '../../../src-shared/metrics/kept-class-bounds';
import { formatIntervalOutward, formatPValue } from '../../../src-shared/metrics/metric-format';
import { headlineLines, notComputedLines } from '../headline-lines';
import { positiveInteger, parseCommandArgs } from '../cli-args';
import { UsageError } from '../usage-error';
import { readScoresInput, SCORES_INPUT_OPTIONS, type ScoresSubject } from '../scores-input';
import { commandCall } from '../command-call';
import { stopIfCancelled } from '../../../src-shared/cancel-signal';

/**
 * knob metrics: every calibration metric of (logits or probabilities, labels), or of a recorded
 * trace's fused output, each with its identity. Default: the full suite at 15 equal-width and 15
 * equal-mass bins plus every named preset; --preset or --bins/--binning/--edges narrow it. A trace
 * of many classes is scored a frame at a time, its classwise metrics left to --every-class.
 */
const EDGE_RULES: EdgeRule[] = ['left-closed', 'right-closed', 'one-in-extra-bin'];

type Values = ReturnType<typeof parseMetricsArgs>['values'];

/** Which metrics the options ask for, of one subject's scores, or of its logit rows (the suite's softmax). */
interface MetricSelection {
  ofScores(scores: ClassScores, top: TopLabelScores, everyClass: boolean): Promise<MetricValue[]>;
  /** Absent when no suite runs (presets alone): the scores are then made first. */
  ofLogitRows?(rows: LogitRows): Promise<{ scores: ClassScores; metrics: MetricValue[] }>;
}

type LogitRows = { rows: LogitArray; classCount: number; labels: Int32Array };

/**
 * Which metrics the options ask for. The full suite runs on both cores (ParallelMetricSuite) when
 * the input is large enough for it to pay, from logit rows when the subject gives them (the softmax
 * then on both threads too); top-label scores (a trace of many classes read without
 * --every-class) take the one-thread suite, which is then O(frames), with the classwise metrics
 * marked not computed.
 */
function metricSelection(values: Values, presets: PresetName[], parallel: ParallelMetricSuite): MetricSelection {
  const suite = (scores: ClassScores, top: TopLabelScores, everyClass: boolean, options: MetricSuiteOptions) =>
    everyClass
      ? parallel.fromScores(scores, options)
      : Promise.resolve(metricSuite(scores, { ...options, everyClass }, top));
  const presetValues = (
    scores: ClassScores,
    top: TopLabelScores,
    everyClass: boolean,
    names: readonly PresetName[],
    suiteValues: readonly MetricValue[] = [],
  ) => names.flatMap((p) => presetMetrics(p, scores, top, everyClass, suiteValues));
  // the suite (under `binnings`, or its own) then the presets `names`, of scores or of logit rows
  // (the suite's softmax on both threads, the presets from the scores it made)
  const withSuite = (binnings: BinningSpec[] | undefined, names: readonly PresetName[]): MetricSelection => {
    const options = (scores: { sampleCount: number }): MetricSuiteOptions => ({
      ...(binnings === undefined ? {} : { binnings }),
      includeMmce: values.mmce,
      includeTce: withTce(values, scores),
    });
    return {
      ofScores: async (scores, top, everyClass) => {
        const suiteValues = await suite(scores, top, everyClass, options(scores));
        return [...suiteValues, ...presetValues(scores, top, everyClass, names, suiteValues)];
      },
      ofLogitRows: async ({ rows, classCount, labels }) => {
        const suiteOptions = options({ sampleCount: labels.length });
        const { scores, metrics } = await parallel.fromLogits(rows, classCount, labels, suiteOptions);
        return { scores, metrics: [...metrics, ...presetValues(scores, topLabelScores(scores), true, names, metrics)] };
      },
    };
  };
  const custom = values.bins !== undefined || values.binning !== undefined || values.edges !== undefined;
  if (custom) {
    const bins = positiveInteger(values.bins, 'bins', 15, 10_000);
    const scheme = values.binning ?? 'equal-width';
    const edgeRule = (values.edges ?? (scheme === 'equal-mass' ? 'right-closed' : 'left-closed')) as EdgeRule;
    if (!EDGE_RULES.includes(edgeRule)) throw new UsageError(`--edges must be one of ${EDGE_RULES.join(', ')}`);
    const massEdges = (values['mass-edges'] ?? 'midpoint') as MassEdges;
    if (massEdges !== 'midpoint' && massEdges !== 'quantile')
      throw new UsageError("--mass-edges must be 'midpoint' or 'quantile'");
    let spec: BinningSpec;
    if (scheme === 'equal-width') spec = { scheme, bins, edgeRule };
    else if (scheme === 'equal-mass') spec = { scheme, bins, massEdges, edgeRule };
    else throw new UsageError("--binning must be 'equal-width' or 'equal-mass'");
    return withSuite([spec], presets);
  }
  if (presets.length > 0)
    return { ofScores: async (scores, top, everyClass) => presetValues(scores, top, everyClass, presets) };
  return withSuite(undefined, PRESET_NAMES);
}

/** TCE costs one exact test per distinct prediction: included up to this many samples unless --tce. */
const TCE_DEFAULT_LIMIT = 100_000;
const withTce = (values: Values, scores: { sampleCount: number }): boolean =>
  values.tce || scores.sampleCount <= TCE_DEFAULT_LIMIT;

function parseMetricsArgs(args: string[]) {
  return parseCommandArgs(args, {
    ...SCORES_INPUT_OPTIONS,
    preset: { type: 'string', multiple: true },
    bins: { type: 'string' },
    binning: { type: 'string' },
    edges: { type: 'string' },
    'mass-edges': { type: 'string' },
    mmce: { type: 'boolean', default: false },
    tce: { type: 'boolean', default: false },
    'every-class': { type: 'boolean', default: false },
    intervals: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  });
}

export async function metricsCommand(args: string[]): Promise<number> {
  const { values } = parseMetricsArgs(args);
  const presets = (values.preset ?? []) as string[];
  for (const preset of presets)
    if (!(PRESET_NAMES as readonly string[]).includes(preset))
      throw new UsageError(`--preset must be one of ${PRESET_NAMES.join(', ')}`);
  // the selection checks --bins, --binning and --edges before any input is read (the suite's helper
  // thread starts on first use)
  const parallel = new ParallelMetricSuite();
  const selection = metricSelection(values, presets as PresetName[], parallel);
  const results = [];
  const call = commandCall('metrics', values.json);
  try {
    const subjects = await readScoresInput(values, values['every-class'] ? 'all' : 'auto', call, parallel);
    for (const [index, source] of subjects.entries()) {
      stopIfCancelled(call.signal, 'knob metrics was interrupted');
      call.progress(`scoring ${source.subject}`, index, subjects.length);
      // every class from logit rows: the suite's own softmax on both threads; otherwise the scores
      const rows = selection.ofLogitRows === undefined ? undefined : source.logitRows?.();
      const scored: ScoresSubject & { metrics?: MetricValue[] } =
        rows === undefined
          ? await source.scored()
          : { subject: source.subject, ...(await selection.ofLogitRows!(rows)) };
      const { subject, scores, top: given, kept } = scored;
      const top = given ?? topLabelScores(scores);
      const metrics = scored.metrics ?? (await selection.ofScores(scores, top, given === undefined));
      results.push({
        subject,
        samples: scores.sampleCount,
        classes: scores.classCount,
        kept:
          kept === undefined
            ? undefined
            : { description: keptClassesText(kept), unsettledFrames: kept.bounds.unsettledFrames },
        metrics: kept === undefined ? metrics : withKeptClassBounds(metrics, kept.bounds, kept),
        headline: values.intervals ? headlineFigures(scores, top) : undefined,
        l2CeIntervals: values.intervals
          ? l2CeIntervalsWithBootstrap(top.confidence, top.correct, EQUAL_WIDTH_15)
          : undefined,
      });
    }
  } finally {
    call.dispose();
    await parallel.close();
  }
  if (values.json) {
    // The first subject at the top level (the fused output of a trace), each branch under `branches`.
    const [primary, ...branches] = results;
    process.stdout.write(`${JSON.stringify({ ...primary, branches: branches.length ? branches : undefined })}\n`);
    return 0;
  }
  const lines: string[] = [];
  for (const result of results) {
    if (lines.length > 0) lines.push('');
    lines.push(`${result.subject}: ${result.samples} samples, ${result.classes} classes`);
    if (result.kept !== undefined)
      lines.push(
        `  from ${result.kept.description}: each value below says how far the full trace's can lie; ${result.kept.unsettledFrames} frames' top-1 not settled by the kept classes`,
      );
    for (const m of result.metrics)
      lines.push(
        m.unavailable !== undefined
          ? `${'—'.padStart(12)}  ${m.identity} (${unavailableText(m.unavailable)})`
          : `${(/P-value/.test(m.identity) ? formatPValue(m.value) : m.value.toPrecision(6)).padStart(12)}  ${m.identity}${m.approximation ? ` (${m.approximation})` : ''}`,
      );
    lines.push(...notComputedLines(result.metrics));
    if (result.headline) lines.push(...headlineLines(result.headline));
    if (result.headline && result.kept !== undefined)
      lines.push(`  (the intervals resample the kept-class figures; each stated bound above adds to them)`);
    if (result.l2CeIntervals) {
      const { asymptotic, bootstrap } = result.l2CeIntervals;
      lines.push(
        `${asymptotic.estimate.toPrecision(6).padStart(12)}  ${asymptotic.valueIdentity}`,
        `${''.padStart(12)}  ${formatIntervalOutward(asymptotic.lo, asymptotic.hi)} ${asymptotic.identity}; ${asymptotic.regime} regime`,
        `${''.padStart(12)}  ${formatIntervalOutward(bootstrap.lo, bootstrap.hi)} ${bootstrap.identity}`,
        ...(bootstrap.note === undefined ? [] : [`${''.padStart(12)}  note: ${bootstrap.note}`]),
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
