import { checkOutputFolder, writeOutputFiles } from '../../core/files/output-files';
import { readTraceFile } from '../../core/recording/trace-arrow';
import { storedProvenanceOf } from '../../core/report/provenance';
import { settingsFile } from '../../core/recording/settings-file';
import { sectionReportFiles } from '../../core/report/section-report';
import { tuneKnobs } from '../../core/use-cases/tune-knobs';
import { tuningSummary } from '../../core/tuning/tuning-view';
import { jsonText, printJson } from '../json-output';
import { describeSettings } from '../../core/report/provenance';
import { formatMetricValue } from '../../../src-shared/metrics/metric-format';
import { paretoPlotSvg, tuningFramesLabel, tuningHeatmapSvg } from '../../../src-shared/plots/tuning-plots';
import {
  parseTuningRequest,
  type TuningCandidate,
  tuningSplitOf,
  type TuningRequestInput,
  type TuningResult,
} from '../../../src-shared/tuning';
import {
  GATE_OPTIONS,
  numberOption,
  parseCommandArgs,
  positiveInteger,
  seedOption,
  settingsOverTrace,
} from '../cli-args';
import { UsageError } from '../usage-error';
import { abortOnInterrupt } from '../interrupt';
import { createProgress } from '../progress';

/** "MIN:MAX:N" -> a grid range. */
function rangeOption(
  value: string | undefined,
  name: string,
): { min: number; max: number; points: number } | undefined {
  if (value === undefined) return undefined;
  const parts = value.split(':');
  if (parts.length !== 3) throw new UsageError(`--${name} must be MIN:MAX:N, got '${value}'`);
  const [min, max, points] = parts.map((p, i) => numberOption(p, `${name} (${['MIN', 'MAX', 'N'][i]})`, Number.NaN));
  return { min: min!, max: max!, points: points! };
}

/** "a,b,c" -> a list of its items. */
function listOption(value: string | undefined, name: string): string[] | undefined {
  if (value === undefined) return undefined;
  const items = value.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw new UsageError(`--${name} must be a comma-separated list, got '${value}'`);
  return items;
}

const numbers = (items: string[] | undefined, name: string) => items?.map((s) => numberOption(s, name, Number.NaN));

function describeCandidate(result: TuningResult, c: TuningCandidate): string {
  const temperature = c.point.temperature === 1 ? '' : `, temperature ${Number(c.point.temperature.toPrecision(4))}`;
  const settling = c.settlingTimeSeconds === null ? 'no settling' : `settling ${c.settlingTimeSeconds.toFixed(3)} s`;
  const bandwidth = c.bandwidthHz === null ? 'no bandwidth limit' : `bandwidth ${c.bandwidthHz.toFixed(3)} Hz`;
  // 4 significant digits on screen; tuning.json and knob-settings.json keep the exact values
  const shown = {
    ...c.point.settings,
    zeta: Number(c.point.settings.zeta.toPrecision(4)),
    wnRadPerSec: Number(c.point.settings.wnRadPerSec.toPrecision(4)),
  };
  return `${describeSettings(shown)}${temperature}: ${result.metric} ${formatMetricValue(result.identity, c.metric)} on the search frames (${settling}, overshoot ${c.overshootPercent.toFixed(2)} %, ${bandwidth})`;
}

function describeConstraints(result: TuningResult): string {
  const c = result.constraints;
  const parts = [
    c.maxSettlingSeconds === undefined ? null : `2 % settling <= ${c.maxSettlingSeconds} s`,
    c.maxOvershootPercent === undefined ? null : `overshoot <= ${c.maxOvershootPercent} %`,
    c.minBandwidthHz === undefined ? null : `bandwidth >= ${c.minBandwidthHz} Hz`,
  ].filter((p) => p !== null);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

/** knob tune TRACE: the knobs tuned on a recorded trace, by replay, on every core. */
export async function tuneCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      ...GATE_OPTIONS,
      metric: { type: 'string' },
      'max-settling': { type: 'string' },
      'max-overshoot': { type: 'string' },
      'min-bandwidth': { type: 'string' },
      split: { type: 'string' },
      'search-on': { type: 'string' },
      'evaluate-fraction': { type: 'string' },
      seed: { type: 'string' },
      'zeta-range': { type: 'string' },
      'wn-range': { type: 'string' },
      variants: { type: 'string' },
      modes: { type: 'string' },
      taus: { type: 'string' },
      temperatures: { type: 'string' },
      'coarse-only': { type: 'boolean', default: false },
      'every-frame': { type: 'boolean', default: false },
      threads: { type: 'string' },
      replicates: { type: 'string' },
      out: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    true,
  );
  if (positionals.length !== 1) throw new UsageError('knob tune takes one trace file');
  if (values.out !== undefined) await checkOutputFolder(values.out);
  const split = values.split ?? 'time';
  if (split !== 'time' && split !== 'random' && split !== 'none')
    throw new UsageError(`--split must be time, random or none, got '${split}'`);
  const evaluateFraction = numberOption(values['evaluate-fraction'], 'evaluate-fraction', 0.3);
  const optional = (name: 'max-settling' | 'max-overshoot' | 'min-bandwidth') =>
    values[name] === undefined ? undefined : numberOption(values[name], name, Number.NaN);
  const raw: TuningRequestInput = {
    metric: values.metric as TuningRequestInput['metric'],
    split: tuningSplitOf(split, evaluateFraction, seedOption(values.seed)),
    searchOn: values['search-on'] as TuningRequestInput['searchOn'],
    zeta: rangeOption(values['zeta-range'], 'zeta-range'),
    wnRadPerSec: rangeOption(values['wn-range'], 'wn-range'),
    variants: listOption(values.variants, 'variants') as TuningRequestInput['variants'],
    modes: listOption(values.modes, 'modes') as TuningRequestInput['modes'],
    tauSeconds: numbers(listOption(values.taus, 'taus'), 'taus'),
    temperatures: numbers(listOption(values.temperatures, 'temperatures'), 'temperatures'),
    constraints: {
      maxSettlingSeconds: optional('max-settling'),
      maxOvershootPercent: optional('max-overshoot'),
      minBandwidthHz: optional('min-bandwidth'),
    },
    refine: !values['coarse-only'],
    ...(values['every-frame'] ? { screening: null } : {}),
    replicates: values.replicates === undefined ? undefined : positiveInteger(values.replicates, 'replicates', 1000),
    seed: seedOption(values.seed),
  };
  const request = parseTuningRequest(raw);
  const threads = values.threads === undefined ? undefined : positiveInteger(values.threads, 'threads', 2, 64);
  // the options are checked above, before the trace is read
  const file = await readTraceFile(positionals[0]!);
  const { gate: current, calibrator } = await settingsOverTrace(values, file);
  const progress = createProgress('tune', !values.json);
  const interrupt = abortOnInterrupt();
  let result: Awaited<ReturnType<typeof tuneKnobs>>;
  try {
    result = await tuneKnobs({
      trace: file.trace,
      request,
      gate: current,
      calibrator,
      threads,
      signal: interrupt.signal,
      onProgress: (done, total, stage) => progress.update(done, total, stage),
    });
  } finally {
    progress.finish();
    interrupt.dispose();
  }
  const written =
    values.out === undefined
      ? []
      : await writeTuningOutputs(values.out, result, positionals[0]!, storedProvenanceOf(file.context)?.model ?? null);
  if (values.json) {
    printJson({ trace: positionals[0], ...tuningSummary(result), files: written });
    return 0;
  }
  for (const line of tuningSummaryLines(result, positionals[0]!)) process.stdout.write(`${line}\n`);
  for (const path of written) process.stdout.write(`wrote ${path}\n`);
  return 0;
}

function tuningSummaryLines(result: TuningResult & { threads: number; wallMs: number }, trace: string): string[] {
  const d = result.improvement;
  const fmt = (v: number) => formatMetricValue(result.identity, v);
  return [
    `tuned on ${trace}: ${result.split}; searched on ${result.searchFrameCount} frames${result.screenedFrameCount === null ? '' : ` (the grid and refinement screened on an even stride of ${result.screenedFrameCount}${result.confirmed.length === 0 ? '' : `, the best ${result.confirmed.length} settings scored again on all`})`}, reported on ${result.heldOutFrameCount}${result.searchedOnHeldOut ? ' (the same frames the search chose on: the interval below is flattered by the choice)' : ' held-out frames'}`,
    `metric:      ${result.identity}`,
    `constraints: ${describeConstraints(result)}`,
    `current:     ${describeCandidate(result, result.current)}`,
    result.foundFeasible
      ? `best:        ${describeCandidate(result, result.best)}`
      : `best:        no setting of the grid meets the constraints; the current setting is kept`,
    `held out:    current ${fmt(result.heldOut.current)}, best ${fmt(result.heldOut.best)}`,
    `improvement: ${fmt(d.difference)} (best - current on the held-out frames; 95 % paired bootstrap interval ${fmt(d.interval.lo)} to ${fmt(d.interval.hi)}, ${d.interval.replicates} resamples${d.note === undefined ? '' : `; ${d.note}`}): ${d.verdict === 'indistinguishable' ? 'within the noise (indistinguishable from the current setting)' : d.verdict}`,
    `search:      ${result.evaluations} settings (grid ${result.grid.length}, refinement ${result.evaluations - result.grid.length - result.confirmed.length - 1}${result.confirmed.length === 0 ? '' : `, confirmed ${result.confirmed.length}`}) on ${result.threads} thread(s) in ${(result.wallMs / 1000).toFixed(2)} s`,
  ];
}

async function writeTuningOutputs(
  dir: string,
  result: TuningResult & { threads: number; wallMs: number },
  trace: string,
  model: { paths: string[]; sha256: string[] } | null,
): Promise<string[]> {
  const heatmap = tuningHeatmapSvg(result);
  const pareto = paretoPlotSvg(result);
  const row = (name: string, c: TuningCandidate) => [
    name,
    c.point.settings.variant,
    c.point.settings.variant === 'second-order' ? c.point.settings.zeta.toPrecision(4) : '—',
    c.point.settings.variant === 'instant' ? '—' : c.point.settings.wnRadPerSec.toPrecision(4),
    c.point.temperature.toPrecision(4),
    formatMetricValue(result.identity, c.metric),
    c.settlingTimeSeconds === null ? '—' : c.settlingTimeSeconds.toFixed(3),
    c.overshootPercent.toFixed(2),
    c.bandwidthHz === null ? '—' : c.bandwidthHz.toFixed(3),
  ];
  const columns = [
    'setting',
    'variant',
    'zeta',
    'wn (rad/s)',
    'temperature',
    result.metric,
    'settling (s)',
    'overshoot (%)',
    'bandwidth (Hz)',
  ];
  const report = sectionReportFiles(`Tuning of ${trace}`, [
    {
      heading: 'Result',
      paragraphs: tuningSummaryLines(result, trace),
      table: { columns, rows: [row('current', result.current), row('best', result.best)] },
    },
    {
      heading: 'Sweep',
      paragraphs: [
        `The metric on ${tuningFramesLabel(result)} over the (zeta, wn) grid; hatched settings break a constraint.`,
      ],
      figure:
        heatmap === null
          ? null
          : {
              name: 'sweep',
              caption: `${result.identity} on ${tuningFramesLabel(result)} over zeta and wn.`,
              svg: heatmap,
            },
    },
    {
      heading: 'Pareto front',
      paragraphs: [
        `Settings no other beats on both the metric (on ${tuningFramesLabel(result)}) and the settling time.`,
      ],
      table: { columns, rows: result.pareto.map((c, i) => row(`${i + 1}`, c)) },
      figure:
        pareto === null
          ? null
          : {
              name: 'pareto',
              caption: `The metric on ${tuningFramesLabel(result)} against 2 % settling time.`,
              svg: pareto,
            },
    },
  ]);
  const best = result.best;
  return writeOutputFiles(dir, [
    ...report,
    { name: 'tuning.json', data: jsonText(tuningSummary(result)) },
    settingsFile({
      gate: best.point.settings,
      model: model?.paths.join(' + ') ?? null,
      modelSha256: model?.sha256 ?? null,
      calibrator: best.point.temperature === 1 ? null : { method: 'temperature', temperature: best.point.temperature },
    }),
  ]);
}
