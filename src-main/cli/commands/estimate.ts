import { storedProvenanceOf } from '../../core/report/provenance';
import {
  estimateAccuracyOfTrace,
  readReferenceTrace,
  type EstimateAccuracyResult,
  type EstimateGrouping,
} from '../../core/use-cases/estimate-accuracy';
import {
  frameCountOption,
  frameRangeOption,
  GATE_OPTIONS,
  blockBootstrapReplicatesOption,
  parseCommandArgs,
  seedOption,
} from '../cli-args';
import { runOverTrace } from '../trace-command';
import { UsageError } from '../usage-error';

const percent = (v: number) => `${(100 * v).toFixed(1)}`;

function reportLines(r: EstimateAccuracyResult, trace: string): string[] {
  const lines = [
    `label-free accuracy of ${trace}: fitted on the ${r.referenceLabelledFrames} labelled frames of ${r.referenceStart}:${r.referenceEnd} (accuracy ${percent(r.referenceAccuracy)} %); the frames after it by ${r.by}, their labels not read`,
    ...(r.approximation === undefined ? [] : [r.approximation]),
    ...r.methods.map((m) => `${m.method}: ${m.identity}; assumes ${m.assumption}`),
    '',
    `${r.by === 'severity' ? 'severity' : 'from frame'}\tframes\t${r.methods.map((m) => `${m.method} % [95 %]`).join('\t')}\ttrue accuracy %`,
  ];
  for (const g of r.groups)
    lines.push(
      [
        g.key,
        String(g.frames),
        ...g.estimates.map((e) => `${percent(e.value)} [${percent(e.low)}, ${percent(e.high)}]`),
        g.trueAccuracy === null ? 'no labels' : `${percent(g.trueAccuracy)} (${g.labelledFrames} labelled)`,
      ].join('\t'),
    );
  for (const s of r.summary)
    if (s.meanAbsoluteError !== null)
      lines.push(
        `${s.method}: mean absolute error ${percent(s.meanAbsoluteError)} points over ${s.groups} groups with labels; interval covers the truth in ${s.covered}`,
      );
  return lines;
}

/** knob estimate TRACE: accuracy without labels, fitted on a labelled reference window. */
export async function estimateCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      ...GATE_OPTIONS,
      reference: { type: 'string' },
      'reference-trace': { type: 'string' },
      by: { type: 'string' },
      'window-frames': { type: 'string' },
      replicates: { type: 'string' },
      seed: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    true,
  );
  if (positionals.length !== 1) throw new UsageError('knob estimate takes one trace file');
  const reference = frameRangeOption(values.reference, 'reference');
  const by = (values.by ?? 'severity') as EstimateGrouping;
  if (by !== 'severity' && by !== 'window') throw new UsageError(`--by must be severity or window, got '${by}'`);
  const windowFrames = frameCountOption(values['window-frames'], 'window-frames', 1, 100_000_000);
  const replicates = blockBootstrapReplicatesOption(values.replicates);
  const seed = seedOption(values.seed);
  return runOverTrace(
    'estimate',
    values,
    positionals[0]!,
    'estimating',
    async (trace, settings, _signal, file) => {
      const path = values['reference-trace'];
      // the reference must be of the model this trace was recorded with
      const model = storedProvenanceOf(file.context)?.model ?? null;
      const referenceTrace = path === undefined ? null : await readReferenceTrace(String(path), model);
      return estimateAccuracyOfTrace({
        trace,
        settings,
        reference,
        referenceTrace,
        by,
        windowFrames,
        replicates,
        seed,
      });
    },
    (result) => reportLines(result, positionals[0]!),
  );
}
