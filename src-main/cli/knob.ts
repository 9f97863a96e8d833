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
import { CORRUPTION_NAMES, isCorruptionName } from '../../src-shared/corruptions';
import { corruptDataset } from '../core/datasets/corrupt-dataset';
import { EMBEDDED_IMAGES_PATH, EMBEDDED_LABELS_PATH } from '../core/datasets/embedded-dataset';
import { DEFAULT_MODEL_PATH, MODEL_CARD_IMAGES_PER_CONDITION } from '../core/model-card/default-model';
import { generateModelCard, modelCardMarkdown } from '../core/model-card/model-card';
import { writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * The `knob` command: headless access to the same core and src-shared code the app uses.
 * Exit codes: 0 success, 1 failure (one-line reason on stderr), 2 bad usage.
 */
const USAGE = `knob — Knob Studio on the command line

Usage:
  knob response [--zeta Z] [--wn W] [--fps F] [--variant V] [--discretization D] [--json]
      Step and frequency figures of the gate: continuous, and discrete at the frame rate
      (overshoot, 10-90 % rise, 2 % settling, -3 dB bandwidth, resonant peak).
  knob corrupt --input IDX --corruption NAME --severity 1..5 [--seed S] [--offset N] [--limit N]
               (--out FILE.idx[.gz] | --out-dir DIR --format png) [--json]
      Writes a corrupted copy of an IDX image set (e.g. resources/data/t10k-images-idx3-ubyte.gz);
      image i uses the per-frame seed of a stream with seed S. Corruptions: ${CORRUPTION_NAMES.join(', ')}.
  knob model-card [--model FILE] [--images-per-condition N] [--out-dir DIR] [--json]
      Regenerates the model card (markdown + JSON) of a Knob-native model on the embedded test set
      and every grayscale corruption x severity (default: the shipped model, 1000 images per condition).
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

async function corruptCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      input: { type: 'string' },
      corruption: { type: 'string' },
      severity: { type: 'string' },
      seed: { type: 'string' },
      offset: { type: 'string' },
      limit: { type: 'string' },
      out: { type: 'string' },
      'out-dir': { type: 'string' },
      format: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (!values.input) throw new UsageError('--input is required');
  if (!values.corruption || !isCorruptionName(values.corruption)) throw new UsageError(`--corruption must be one of ${CORRUPTION_NAMES.join(', ')}`);
  const severity = numberOption(values.severity, 'severity', Number.NaN);
  if (!Number.isInteger(severity) || severity < 1 || severity > 5) throw new UsageError('--severity must be an integer 1..5');
  const format = values.format ?? (values['out-dir'] ? 'png' : 'idx');
  if (format !== 'idx' && format !== 'png') throw new UsageError("--format must be 'idx' or 'png'");
  const out = format === 'png' ? values['out-dir'] : values.out;
  if (!out) throw new UsageError(format === 'png' ? '--out-dir is required for PNG output' : '--out is required for IDX output');
  const progress = !values.json && process.stderr.isTTY;
  const result = await corruptDataset({
    imagesPath: values.input,
    corruption: values.corruption,
    severity,
    seed: numberOption(values.seed, 'seed', 0),
    offset: values.offset === undefined ? undefined : numberOption(values.offset, 'offset', 0),
    limit: values.limit === undefined ? undefined : numberOption(values.limit, 'limit', 0),
    out,
    format,
    onProgress: progress ? (done, total) => process.stderr.write(`\rcorrupting ${done}/${total}`) : undefined,
  });
  if (progress) process.stderr.write('\n');
  if (values.json) process.stdout.write(`${JSON.stringify({ ...result, out, format, corruption: values.corruption, severity })}\n`);
  else process.stdout.write(`wrote ${result.images} corrupted images (${values.corruption}, severity ${severity}) to ${out}\n`);
  return 0;
}

async function modelCardCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      model: { type: 'string' },
      'images-per-condition': { type: 'string' },
      'out-dir': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const modelPath = values.model ?? DEFAULT_MODEL_PATH;
  const progress = !values.json && process.stderr.isTTY;
  const card = await generateModelCard({
    modelPath,
    imagesPath: EMBEDDED_IMAGES_PATH,
    labelsPath: EMBEDDED_LABELS_PATH,
    imagesPerCondition: numberOption(values['images-per-condition'], 'images-per-condition', MODEL_CARD_IMAGES_PER_CONDITION),
    onProgress: progress ? (message) => process.stderr.write(`\rmodel card: ${message.padEnd(24)}`) : undefined,
  });
  if (progress) process.stderr.write('\n');
  const outDir = values['out-dir'] ?? dirname(modelPath);
  const stem = basename(modelPath).replace(/\.onnx$/, '');
  await writeFile(join(outDir, `${stem}.card.json`), `${JSON.stringify(card, null, 1)}\n`);
  await writeFile(join(outDir, `${stem}.card.md`), modelCardMarkdown(card));
  if (values.json) process.stdout.write(`${JSON.stringify(card)}\n`);
  else process.stdout.write(`wrote ${join(outDir, `${stem}.card.md`)} and .card.json; targets met: ${card.targets.filter((t) => t.met).length} of ${card.targets.length}\n`);
  return 0;
}

export async function main(argv: string[]): Promise<number> {
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
    if (command === 'corrupt') return await corruptCommand(rest);
    if (command === 'model-card') return await modelCardCommand(rest);
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
