import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DEFAULT_REPLICATES } from '../../src-shared/drift/block-bootstrap';
import {
  CORRUPTION_NAMES,
  isCorruptionName,
  parseCorruptionSchedule,
  type CorruptionSchedule,
} from '../../src-shared/corruptions';
import {
  DEFAULT_GATE_SETTINGS,
  FRAME_RATE_RANGE_HZ,
  parseGateSettings,
  type GateSettings,
} from '../../src-shared/gate';
import type { CalibratorSpec } from '../../src-shared/calibrators';
import { UsageError } from './usage-error';
import { checkSettingsModel } from '../core/recording/model-binding';
import { storedProvenanceOf } from '../core/report/provenance';
import type { TraceFile } from '../core/recording/trace-arrow';

type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | string[] | boolean[] | undefined>;

/** A number written with a leading minus ("-1", "-0.5", "-.5", "-1e-3", "-Infinity"). */
const NEGATIVE_NUMBER = /^-(\d|\.\d|Infinity$)/;

/**
 * A command's options, parsed strictly by node:util, with one thing it does not do: a negative
 * number after an option that takes a value is that value (`--zeta -1` reaches the range check
 * that names the range, instead of failing as an unknown option '-1').
 */
export function parseCommandArgs<O extends Options, P extends boolean = false>(
  args: string[],
  options: O,
  allowPositionals?: P,
) {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const name = arg.startsWith('--') ? arg.slice(2) : null;
    if (name !== null && options[name]?.type === 'string' && NEGATIVE_NUMBER.test(args[i + 1] ?? '')) {
      joined.push(`${arg}=${args[++i]}`);
    } else joined.push(arg);
  }
  return parseArgs({ args: joined, options, strict: true, allowPositionals: allowPositionals ?? (false as P) });
}

export function numberOption(value: Values[string], name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(parsed))
    throw new UsageError(`--${name} must be a number, got '${String(value)}'`);
  return parsed;
}

/** A number within [min, max] (an integer when asked): anything else is bad usage naming the range. */
export function numberInRange(
  value: Values[string],
  name: string,
  fallback: number,
  range: { min: number; max: number; integer?: boolean; aboveMin?: boolean },
): number {
  const parsed = numberOption(value, name, fallback);
  const low = range.aboveMin ? parsed > range.min : parsed >= range.min;
  if (!low || parsed > range.max || (range.integer && !Number.isInteger(parsed))) {
    const kind = range.integer ? 'an integer' : 'a number';
    const bounds = range.aboveMin ? `above ${range.min} and at most ${range.max}` : `from ${range.min} to ${range.max}`;
    throw new UsageError(`--${name} must be ${kind} ${bounds}, got '${String(value)}'`);
  }
  return parsed;
}

/** A frame rate option (--fps, --frame-rate) within the range every schema accepts (accepted-ranges.ts). */
export function frameRateOption(value: Values[string], name: string, fallback: number): number {
  return numberInRange(value, name, fallback, FRAME_RATE_RANGE_HZ);
}

export function positiveInteger(value: Values[string], name: string, fallback: number, max = 2 ** 31 - 1): number {
  return numberInRange(value, name, fallback, { min: 1, max, integer: true });
}

/** Batches of frames sent to the model at once (a batch's frames are held in memory twice). */
export const MAX_BATCH = 4096;
/** A START:END window of frame indices (--reference, --window), or null when not given. */
export function frameRangeOption(value: Values[string], option: string): { start: number; end: number } | null {
  if (value === undefined) return null;
  const match = /^(\d+):(\d+)$/.exec(String(value));
  if (match === null) throw new UsageError(`--${option} takes START:END frame indices, got '${String(value)}'`);
  const start = Number(match[1]);
  const end = Number(match[2]);
  if (!(Number.isSafeInteger(start) && Number.isSafeInteger(end) && start < end))
    throw new UsageError(`--${option} START:END needs START < END, got '${String(value)}'`);
  return { start, end };
}

/** A count of frames within [min, max], or null when not given (the command's default applies). */
export function frameCountOption(value: Values[string], option: string, min: number, max: number): number | null {
  return value === undefined ? null : numberInRange(value, option, 0, { min, max, integer: true });
}

/** Seeds are 32-bit: the corruption generator's state. */
export function seedOption(value: Values[string]): number {
  return numberInRange(value, 'seed', 0, { min: 0, max: 0xffffffff, integer: true });
}

/** --replicates of a block bootstrap (knob estimate, knob timeline): 20 to 10,000 resamples. */
export function blockBootstrapReplicatesOption(value: Values[string]): number {
  return numberInRange(value, 'replicates', DEFAULT_REPLICATES, { min: 20, max: 10_000, integer: true });
}

export const GATE_OPTIONS = {
  settings: { type: 'string' },
  'allow-other-model': { type: 'boolean', default: false },
  zeta: { type: 'string' },
  wn: { type: 'string' },
  variant: { type: 'string' },
  mode: { type: 'string' },
  discretization: { type: 'string' },
  tau: { type: 'string' },
  g0: { type: 'string' },
  prewarp: { type: 'boolean' },
} as const satisfies Options;

export const GATE_USAGE =
  '[--settings knob-settings.json [--allow-other-model]] [--zeta Z] [--wn W rad/s] [--variant instant|ema|second-order] [--mode continuous|reset] [--discretization zoh|tustin] [--tau S] [--g0 G] [--prewarp]';

/**
 * Settings from the command line over a base: the settings file the desk exported (--settings, a
 * file or the export folder) when given, else `recorded` (a trace's run settings) or the defaults;
 * with the file's output calibrator (null without a file, or when it has none) and the model it was
 * tuned with, which the command checks once its model is known (`checkSettingsForModel`).
 */
export async function settingsFromArgs(
  values: Values,
  recorded: GateSettings = DEFAULT_GATE_SETTINGS,
): Promise<{ gate: GateSettings; calibrator: CalibratorSpec | null; settingsModel: string[] | null }> {
  // the settings file's reader loads only for a command given one: it reads bundles too, so it
  // brings onnxruntime-node's native module and the calibrators, and every trace command parses
  // its knobs here (`knob monitor --help` 0.56 s -> 0.35 s, median of 7, 2026-12-07)
  const file =
    typeof values.settings === 'string'
      ? await (await import('../core/use-cases/import-knobs')).importKnobs(values.settings, null)
      : null;
  const base = file?.gate ?? recorded;
  const gate = parseGateSettings({
    ...base,
    zeta: numberOption(values.zeta, 'zeta', base.zeta),
    wnRadPerSec: numberOption(values.wn, 'wn', base.wnRadPerSec),
    variant: values.variant ?? base.variant,
    mode: values.mode ?? base.mode,
    discretization: values.discretization ?? base.discretization,
    tauSeconds: numberOption(values.tau, 'tau', base.tauSeconds),
    g0: numberOption(values.g0, 'g0', base.g0),
    tustinPrewarp: values.prewarp === undefined ? base.tustinPrewarp : Boolean(values.prewarp),
  });
  return { gate, calibrator: file?.calibrator ?? null, settingsModel: file?.modelSha256 ?? null };
}

/** A --settings file tuned with another model is refused unless --allow-other-model (model-binding.ts). */
export function checkSettingsForModel(
  values: Values,
  settingsModel: string[] | null,
  model: { paths: string[]; sha256: string[] },
): void {
  checkSettingsModel(
    String(values.settings),
    settingsModel,
    model,
    values['allow-other-model'] === true,
    'pass --allow-other-model to apply it anyway',
  );
}

/**
 * The settings for a recorded trace: the options over the settings the trace was recorded with, so
 * a command given no knob options reproduces the run; a settings file tuned with another model than
 * the trace's is refused unless --allow-other-model.
 */
export async function settingsOverTrace(
  values: Values,
  file: TraceFile,
): Promise<{ gate: GateSettings; calibrator: CalibratorSpec | null }> {
  const settings = await settingsFromArgs(values, file.run?.settings ?? DEFAULT_GATE_SETTINGS);
  const traceModel = storedProvenanceOf(file.context)?.model ?? null;
  if (traceModel !== null) checkSettingsForModel(values, settings.settingsModel, traceModel);
  return settings;
}

/** The gate settings of `settingsFromArgs` alone. */
export async function gateSettingsFromArgs(
  values: Values,
  recorded: GateSettings = DEFAULT_GATE_SETTINGS,
): Promise<GateSettings> {
  return (await settingsFromArgs(values, recorded)).gate;
}

export const SCHEDULE_OPTIONS = {
  corrupt: { type: 'string' },
  severity: { type: 'string' },
  schedule: { type: 'string' },
  levels: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  start: { type: 'string' },
  end: { type: 'string' },
  mean: { type: 'string' },
  amplitude: { type: 'string' },
  frequency: { type: 'string' },
  corruptions: { type: 'string' },
  hold: { type: 'string' },
  'max-severity': { type: 'string' },
  'min-severity': { type: 'string' },
  seed: { type: 'string' },
} as const satisfies Options;

export const SCHEDULE_USAGE = `[--corrupt NAME --severity 1..5]
               [--schedule constant|step|ramp|sine|random  (with --corrupt NAME and:
                  constant --severity S | step --levels FRAME:S,FRAME:S,... | ramp --from S --to S --start F --end F
                  | sine --mean S --amplitude A --frequency HZ | random --corruptions A,B,... --hold FRAMES [--min-severity S] [--max-severity S])]
               [--seed N]`;

/** The corruption schedule the options describe ('none' when no corruption is asked for). */
export function scheduleFromArgs(values: Values, frameRateHz: number): CorruptionSchedule {
  const kind = (values.schedule as string | undefined) ?? (values.corrupt !== undefined ? 'constant' : 'none');
  const corruption = values.corrupt as string | undefined;
  if (kind !== 'none' && kind !== 'random' && (corruption === undefined || !isCorruptionName(corruption))) {
    throw new UsageError(`--corrupt must be one of ${CORRUPTION_NAMES.join(', ')}`);
  }
  const num = (name: string, fallback = Number.NaN) => numberOption(values[name], name, fallback);
  const raw = (() => {
    switch (kind) {
      case 'none':
        return { kind };
      case 'constant':
        return { kind, corruption, severity: num('severity') };
      case 'step': {
        const text = (values.levels as string | undefined) ?? '0:1,300:5,600:1';
        const levels = text.split(',').map((pair) => {
          const [at, s] = pair.split(':').map(Number);
          return { atFrame: at, severity: s };
        });
        return { kind, corruption, levels };
      }
      case 'ramp':
        return {
          kind,
          corruption,
          fromSeverity: num('from', 0),
          toSeverity: num('to', 5),
          startFrame: num('start', 0),
          endFrame: num('end', 1000),
        };
      case 'sine':
        return {
          kind,
          corruption,
          mean: num('mean', 2.5),
          amplitude: num('amplitude', 2.5),
          frequencyHz: num('frequency', 0.1),
          frameRateHz,
          phaseRad: 0,
        };
      case 'random':
        return {
          kind,
          corruptions: ((values.corruptions as string | undefined) ?? corruption ?? '')
            .split(',')
            .filter((s) => s !== ''),
          holdFrames: num('hold', 60),
          maxSeverity: num('max-severity', 5),
          minSeverity: num('min-severity', 0),
        };
      default:
        throw new UsageError(`--schedule must be constant, step, ramp, sine or random, got '${kind}'`);
    }
  })();
  try {
    return parseCorruptionSchedule(raw);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
