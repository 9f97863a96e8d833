import { parseArgs } from 'node:util';
import {
  DEFAULT_GATE_SETTINGS,
  GATE_DISCRETIZATIONS,
  GATE_VARIANTS,
  continuousResponseMetrics,
  discreteResponseMetrics,
  parseGateSettings,
  type GateSettings,
} from '../../src-shared/gate';
import { KnobError } from '../../src-shared/errors';

/**
 * The `knob` command: headless access to the same core and src-shared code the app uses.
 * Exit codes: 0 success, 1 failure (one-line reason on stderr), 2 bad usage.
 */
const USAGE = `knob — Knob Studio on the command line

Usage:
  knob response [--zeta Z] [--wn W] [--fps F] [--variant V] [--discretization D] [--json]
      Step and frequency figures of the gate: continuous, and discrete at the frame rate
      (overshoot, 10-90 % rise, 2 % settling, -3 dB bandwidth, resonant peak).
  knob --help | --version

Defaults: zeta ${DEFAULT_GATE_SETTINGS.zeta}, wn ${DEFAULT_GATE_SETTINGS.wnRadPerSec} rad/s, 30 fps, variant second-order (${GATE_VARIANTS.join(' | ')}),
discretization zoh (${GATE_DISCRETIZATIONS.join(' | ')}).
`;

class UsageError extends Error {}

function numberOption(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new UsageError(`--${name} must be a number, got '${value}'`);
  return parsed;
}

function responseCommand(args: string[]): void {
  const { values } = parseArgs({
    args,
    options: {
      zeta: { type: 'string' },
      wn: { type: 'string' },
      fps: { type: 'string' },
      variant: { type: 'string' },
      discretization: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const settings: GateSettings = parseGateSettings({
    ...DEFAULT_GATE_SETTINGS,
    zeta: numberOption(values.zeta, 'zeta', DEFAULT_GATE_SETTINGS.zeta),
    wnRadPerSec: numberOption(values.wn, 'wn', DEFAULT_GATE_SETTINGS.wnRadPerSec),
    variant: values.variant ?? DEFAULT_GATE_SETTINGS.variant,
    discretization: values.discretization ?? DEFAULT_GATE_SETTINGS.discretization,
  });
  const fps = numberOption(values.fps, 'fps', 30);
  if (!(fps > 0)) throw new UsageError('--fps must be positive');
  const continuous = continuousResponseMetrics(settings);
  const discrete = discreteResponseMetrics(settings, 1 / fps, 'app');
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ settings, frameRateHz: fps, continuous, discrete }, null, 2)}\n`);
    return;
  }
  const f = (v: number | null, digits: number, unit: string): string =>
    v === null ? '—' : v === Infinity ? '∞' : `${v.toFixed(digits)} ${unit}`;
  const lines = [
    `gate ${settings.variant}, zeta ${settings.zeta}, wn ${settings.wnRadPerSec} rad/s; discrete: ${settings.discretization} at ${fps} fps (app convention)`,
    `                      continuous      discrete`,
    `overshoot             ${f(continuous.overshootPercent, 3, '%').padEnd(15)} ${f(discrete.overshootPercent, 3, '%')}`,
    `rise 10-90 %          ${f(continuous.riseTimeSeconds, 4, 's').padEnd(15)} ${f(discrete.riseTimeSeconds, 4, 's')}`,
    `settling 2 %          ${f(continuous.settlingTimeSeconds, 4, 's').padEnd(15)} ${f(discrete.settlingTimeSeconds, 4, 's')}`,
    `bandwidth -3 dB       ${f(continuous.bandwidthHz, 4, 'Hz').padEnd(15)} ${f(discrete.bandwidthHz, 4, 'Hz')}`,
    `resonant peak         ${f(continuous.resonantPeak, 6, '').padEnd(15)} ${f(discrete.resonantPeak, 6, '')}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

export function main(argv: string[]): number {
  const [command, ...rest] = argv;
  try {
    if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    }
    if (command === '--version') {
      process.stdout.write('0.1.0\n');
      return 0;
    }
    if (command === 'response') {
      responseCommand(rest);
      return 0;
    }
    throw new UsageError(`unknown command '${command}'`);
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`knob: ${error.message}\n${USAGE}`);
      return 2;
    }
    if (error instanceof KnobError && error.code === 'INVALID_SETTINGS') {
      process.stderr.write(`knob: ${error.message}\n`);
      return 2;
    }
    process.stderr.write(`knob: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
