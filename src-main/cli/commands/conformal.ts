import { targetCoverage } from '../../../src-shared/calibrators/conformal-prediction';
import { CONFORMAL_SCORES } from '../../../src-shared/api/conformal-schemas';
import { METRIC_GROUPINGS, type MetricGrouping } from '../../../src-shared/api/metrics-schemas';
import { conformalSets, type ConformalSets } from '../../core/use-cases/conformal-view';
import { plainSource } from '../../core/use-cases/view-replay';
import { frameCountOption, GATE_OPTIONS, numberInRange, parseCommandArgs } from '../cli-args';
import { runOverTrace } from '../trace-command';
import { UsageError } from '../usage-error';

type FileSets = Omit<ConformalSets, 'recordingId' | 'settingsVersion'>;

const percent = (share: number) => `${(share * 100).toFixed(1)} %`;

function reportLines(r: FileSets, trace: string): string[] {
  const row = (name: string, c: ConformalSets['overall']) =>
    `${name}: ${c.frames} frames, coverage ${percent(c.coverage)} [${percent(c.lo)}, ${percent(c.hi)}], mean set size ${c.meanSetSize.toFixed(2)}, empty ${percent(c.emptyShare)}, one class ${percent(c.singletonShare)}${c.hi < targetCoverage(r.alpha) ? ' (below target)' : ''}`;
  return [
    `prediction sets of ${trace}: ${r.identity}`,
    `q_hat = ${r.qHat === null ? '+infinity' : r.qHat.toPrecision(6)}${r.calibrator === null ? '' : `; output calibrated by ${r.calibrator}`}`,
    `guarantee: ${r.assumption}`,
    row('all evaluated frames', r.overall),
    ...r.groups.map((g) => row(g.key, g)),
    `set sizes: ${r.sizes.map((s) => `${s.size}: ${s.frames}`).join(', ')}`,
  ];
}

/** knob conformal TRACE: split-conformal prediction sets, the same use case as the desk's panel. */
export async function conformalCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(
    args,
    {
      ...GATE_OPTIONS,
      alpha: { type: 'string' },
      score: { type: 'string' },
      'group-by': { type: 'string' },
      'calibration-share': { type: 'string' },
      last: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    true,
  );
  if (positionals.length !== 1) throw new UsageError('knob conformal takes one trace file');
  const alpha = numberInRange(values.alpha, 'alpha', 0.1, { min: 0, max: 1, aboveMin: true });
  if (alpha === 1) throw new UsageError("--alpha must lie strictly between 0 and 1, got '1'");
  const score = (values.score ?? 'lac') as (typeof CONFORMAL_SCORES)[number];
  if (!CONFORMAL_SCORES.includes(score)) throw new UsageError(`--score must be one of ${CONFORMAL_SCORES.join(', ')}`);
  const groupBy = (values['group-by'] ?? 'none') as MetricGrouping;
  if (!METRIC_GROUPINGS.includes(groupBy))
    throw new UsageError(`--group-by must be one of ${METRIC_GROUPINGS.join(', ')}`);
  const calibrationShare = numberInRange(values['calibration-share'], 'calibration-share', 0.5, { min: 0.1, max: 0.9 });
  const lastFrames = frameCountOption(values.last, 'last', 2, 1_000_000_000) ?? undefined;
  return runOverTrace(
    'conformal',
    values,
    positionals[0]!,
    'calibrating the sets',
    (trace, settings, signal, _file, calibrator) => {
      // the desk's recording id and settings version mean nothing for a file
      const {
        recordingId: _id,
        settingsVersion: _version,
        ...sets
      } = conformalSets(
        plainSource(trace),
        settings,
        { version: 0, recordingId: 1, calibrator },
        { alpha, score, groupBy, calibrationShare, lastFrames },
        signal,
      );
      return sets;
    },
    (result) => reportLines(result, positionals[0]!),
  );
}
