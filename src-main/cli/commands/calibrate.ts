import { checkOutputFile } from '../../core/files/output-files';
import {
  CALIBRATION_METHODS,
  HeldOutSplitSchema,
  describeCalibrator,
  needsConditions,
  type CalibrationMethod,
  type CalibratorComparison,
  type HeldOutSplit,
} from '../../../src-shared/calibrators';
import { DEFAULT_GATE_SETTINGS } from '../../../src-shared/gate';
import { formatMetricValue } from '../../../src-shared/metrics/metric-format';
import { writeOutputFile } from '../../core/files/output-files';
import { settingsFile } from '../../core/recording/settings-file';
import { conditionsFittable, MIN_CONDITION_ROWS } from '../../../src-shared/calibrators/conditional-calibration';
import { applicableMethods, compareCalibratorsOn } from '../../core/use-cases/compare-calibrators';
import { gateSettingsFromArgs, numberInRange, parseCommandArgs, seedOption } from '../cli-args';
import { UsageError } from '../usage-error';
import { readScoresInput, SCORES_INPUT_OPTIONS } from '../scores-input';
import { commandCall, type CommandCall } from '../command-call';

/**
 * knob calibrate: fits calibrators of a model's output on labelled frames and compares them on
 * held-out frames (the split the user chooses), each figure with its bootstrap interval, before
 * and after; the fitted parameters of one method, or of the best by held-out NLL with --method all,
 * written with --out as a knob-settings file (the gate settings and the calibrator).
 */
const BRANCHES = ['fused', 'static', 'dynamic'] as const;

function splitFromArgs(values: Record<string, unknown>): HeldOutSplit {
  const kind = (values.split as string | undefined) ?? 'time';
  const fraction =
    values['evaluate-fraction'] === undefined
      ? undefined
      : numberInRange(values['evaluate-fraction'] as string, 'evaluate-fraction', 0.3, {
          min: 0,
          max: 1,
          aboveMin: true,
        });
  if (fraction === 1) throw new UsageError('--evaluate-fraction must be below 1 (some frames must be left to fit on)');
  const raw =
    kind === 'none'
      ? { kind }
      : kind === 'time'
        ? { kind, evaluateFraction: fraction }
        : kind === 'random'
          ? { kind, evaluateFraction: fraction, seed: seedOption(values.seed as string | undefined) }
          : kind === 'kfold'
            ? {
                kind,
                folds: numberInRange(values.folds as string | undefined, 'folds', 5, {
                  min: 2,
                  max: 20,
                  integer: true,
                }),
                seed: seedOption(values.seed as string | undefined),
              }
            : null;
  if (raw === null) throw new UsageError(`--split must be none, random, time or kfold, got '${kind}'`);
  return HeldOutSplitSchema.parse(raw);
}

function comparisonLines(subject: string, comparison: CalibratorComparison): string[] {
  const names = comparison.before.map((f) => f.name);
  const cell = (identity: string, value: number, lo: number, hi: number) =>
    `${formatMetricValue(identity, value)} [${formatMetricValue(identity, lo)}, ${formatMetricValue(identity, hi)}]`;
  const rows = [
    { label: 'uncalibrated', figures: comparison.before, changed: '' },
    ...comparison.methods.map((m) => ({
      label: m.method,
      figures: m.figures,
      changed: `${(m.top1Changed * 100).toFixed(1)} %`,
    })),
  ];
  const lines = [
    `${subject}: ${comparison.split}; fitted on ${comparison.fitFrames} frames, evaluated on ${comparison.evaluatedFrames}`,
    `intervals: ${comparison.before[0]?.method ?? ''}`,
  ];
  for (const row of rows) {
    lines.push(`${row.label}${row.changed ? ` (top-1 changed on ${row.changed} of evaluated frames)` : ''}`);
    for (const name of names) {
      const f = row.figures.find((x) => x.name === name)!;
      lines.push(`  ${name.padEnd(22)} ${cell(f.identity, f.value, f.lo, f.hi)}`);
    }
  }
  for (const m of comparison.methods)
    lines.push(
      `fitted ${m.method}: ${describeCalibrator(m.spec)}; ${m.report.method}, ${m.report.objectiveName} ${m.report.objective.toPrecision(6)}${m.report.converged ? '' : ' (did not converge)'}`,
    );
  return lines;
}

/**
 * The chosen subject scored, then its calibrators fitted and compared on held-out frames, with
 * progress per method on the command's bar; Ctrl-C stops before the next fit.
 */
async function fittedAndCompared(
  values: Parameters<typeof readScoresInput>[0],
  call: CommandCall,
  choice: { method: string; requested: CalibrationMethod[]; branch: string; split: HeldOutSplit },
) {
  const subjects = await readScoresInput(values, 'all', call);
  const {
    subject,
    scores,
    features = null,
    conditions = null,
    model = null,
  } = await subjects[
    values.trace === undefined ? 0 : BRANCHES.indexOf(choice.branch as (typeof BRANCHES)[number])
  ]!.scored();
  // --method all: the feature methods only where the frames have features (said in the output)
  const { methods, skipped } =
    choice.method === 'all'
      ? applicableMethods(
          choice.requested,
          features !== null,
          // with --method all, only where the conditions are asked for by name and can be fitted
          values['condition-by'] !== undefined && conditions !== null && conditionsFittable(conditions),
        )
      : { methods: choice.requested, skipped: [] };
  // Probabilities become log-probabilities: every method takes logits.
  const logits = scores.logits ?? scores.probabilities.map((p) => Math.log(Math.max(p, 1e-300)));
  const calibrated = {
    name: subject,
    logits,
    labels: scores.labels,
    classCount: scores.classCount,
    features,
    conditions,
  };
  const comparison = compareCalibratorsOn(calibrated, methods, choice.split, {
    onProgress: (done, total, stage) => call.progress(`fitting ${stage}`, done, total),
    signal: call.signal,
  });
  return { subject, model, methods, skipped, comparison };
}

export async function calibrateCommand(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, {
    ...SCORES_INPUT_OPTIONS,
    method: { type: 'string' },
    branch: { type: 'string' },
    split: { type: 'string' },
    'evaluate-fraction': { type: 'string' },
    folds: { type: 'string' },
    seed: { type: 'string' },
    'condition-by': { type: 'string' },
    'condition-hysteresis': { type: 'string' },
    out: { type: 'string' },
    json: { type: 'boolean', default: false },
  });
  const method = values.method;
  if (method === undefined) throw new UsageError(`--method is required: ${CALIBRATION_METHODS.join(', ')} or all`);
  const requested: CalibrationMethod[] =
    method === 'all'
      ? [...CALIBRATION_METHODS]
      : (CALIBRATION_METHODS as readonly string[]).includes(method)
        ? [method as CalibrationMethod]
        : (() => {
            throw new UsageError(`--method must be one of ${CALIBRATION_METHODS.join(', ')} or all, got '${method}'`);
          })();
  const branch = values.branch ?? 'fused';
  if (!(BRANCHES as readonly string[]).includes(branch))
    throw new UsageError(`--branch must be fused, static or dynamic, got '${branch}'`);
  if (values.branch !== undefined && values.trace === undefined)
    throw new UsageError('--branch applies to --trace (files hold one output)');
  if (values['condition-by'] !== undefined && values.trace === undefined)
    throw new UsageError('--condition-by names metadata columns of a trace: it applies to --trace');
  if (values['condition-hysteresis'] !== undefined && values.trace === undefined)
    throw new UsageError('--condition-hysteresis applies over a recorded stream: it applies to --trace');
  const split = splitFromArgs(values);
  // what --out needs, before the frames are read and the calibrators fitted
  const outGate = values.out === undefined ? undefined : await gateSettingsFromArgs(values, DEFAULT_GATE_SETTINGS);
  if (values.out !== undefined) await checkOutputFile(values.out);
  const call = commandCall('calibrate', values.json === true);
  const fitted = await fittedAndCompared(values, call, { method, requested, branch, split }).finally(() =>
    call.dispose(),
  );
  const { subject, model, methods, skipped, comparison } = fitted;
  const best = comparison.methods.reduce((a, b) =>
    (b.figures.find((f) => f.name === 'NLL')?.value ?? Infinity) <
    (a.figures.find((f) => f.name === 'NLL')?.value ?? Infinity)
      ? b
      : a,
  );
  if (values.out !== undefined) {
    const file = settingsFile({
      gate: outGate!,
      model: model?.paths.join(' + ') ?? null,
      modelSha256: model?.sha256 ?? null,
      calibrator: best.spec,
    });
    await writeOutputFile(values.out, file.data);
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ subject, ...comparison, chosen: best.method, skipped })}\n`);
    return 0;
  }
  const lines = comparisonLines(subject, comparison);
  if (skipped.length > 0)
    lines.push(
      `not fitted: ${skipped.join(', ')} (they need the model's features: a trace recorded with --record-features${skipped.some(needsConditions) ? `; with --method all, conditional also --condition-by naming columns that give two conditions of ${MIN_CONDITION_ROWS} labelled frames each` : ''})`,
    );
  if (values.out !== undefined)
    lines.push(
      `wrote ${values.out}: ${describeCalibrator(best.spec)}${methods.length > 1 ? ' (lowest held-out NLL)' : ''}`,
    );
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
