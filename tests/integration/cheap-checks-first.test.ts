/**
 * Issue 26, item 8: cheap checks first. Every command that writes checks its output path, and every
 * option, before it starts the model, opens a source or reads an input file. Each case gives inputs
 * that cannot be opened (a model, trace, source or data file that does not exist) together with a
 * bad output path or a bad option: the command must fail on the output path or the option, which it
 * can only do if that check came before the inputs were touched (before this, `knob run --out
 * /proc/...` started the model and ran it for seconds before refusing the folder).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { knob, knobFailureLine } from '../support/knob-cli';

const dir = mkdtempSync(join(tmpdir(), 'knob-cheap-checks-'));
/** A regular file: nothing can be written under it. */
const plainFile = join(dir, 'plain.txt');
writeFileSync(plainFile, 'not a folder\n');

const NO_MODEL = '/nonexistent-knob-model.onnx';
const NO_TRACE = '/nonexistent-knob-trace.arrow';
const NO_SOURCE = '/nonexistent-knob-source.mp4';
const NO_TABLE = '/nonexistent-knob-table.csv';
const NO_IMAGES = '/nonexistent-knob-images.idx';

/** A bad output place: in /proc, or under a regular file; `named` is what the message must name. */
const BAD_PLACES = [
  { label: 'in /proc', folder: '/proc/knob-out', named: '/proc/knob-out' },
  { label: 'under a regular file', folder: join(plainFile, 'out'), named: plainFile },
];

/** Each command that writes, with inputs it cannot open and its output in `folder`. */
const COMMANDS: Array<{ name: string; args: (folder: string) => string[] }> = [
  { name: 'run', args: (out) => ['run', '--model', NO_MODEL, '--source', NO_SOURCE, '--out', out] },
  { name: 'probe step', args: (out) => ['probe', 'step', '--model', NO_MODEL, '--source', NO_SOURCE, '--out', out] },
  { name: 'probe bode', args: (out) => ['probe', 'bode', '--model', NO_MODEL, '--source', NO_SOURCE, '--out', out] },
  { name: 'replay', args: (out) => ['replay', NO_TRACE, '--out', out] },
  { name: 'tune', args: (out) => ['tune', NO_TRACE, '--out', out] },
  { name: 'analyze', args: (out) => ['analyze', NO_TRACE, '--out', out] },
  {
    name: 'export',
    args: (out) => ['export', '--trace', NO_TRACE, '--model', NO_MODEL, '--out', join(out, 'b.knob.zip')],
  },
  {
    name: 'calibrate',
    args: (out) => [
      'calibrate',
      '--method',
      'temperature',
      '--logits',
      NO_TABLE,
      '--labels',
      NO_TABLE,
      '--out',
      join(out, 'knob-settings.json'),
    ],
  },
  {
    name: 'corrupt (IDX)',
    args: (out) => [
      'corrupt',
      '--input',
      NO_IMAGES,
      '--corruption',
      'shot_noise',
      '--severity',
      '1',
      '--out',
      join(out, 'c.idx'),
    ],
  },
  {
    name: 'corrupt (PNG)',
    args: (out) => ['corrupt', '--input', NO_IMAGES, '--corruption', 'shot_noise', '--severity', '1', '--out-dir', out],
  },
  { name: 'model-card', args: (out) => ['model-card', '--model', NO_MODEL, '--out-dir', out] },
];

const CASES = COMMANDS.flatMap((command) => BAD_PLACES.map((place) => ({ ...command, ...place })));

describe('a bad output path fails before any input is opened', () => {
  it.concurrent.each(CASES)(
    'knob $name with its output $label',
    async ({ args, folder, named }) => {
      const result = await knob(...args(folder));
      const line = knobFailureLine(result, 1);
      expect(line).toContain(named);
      // the inputs were never reached: the failure is the output's, not the missing model's or file's
      expect(line).not.toMatch(/nonexistent-knob/);
      expect(result.stdout).toBe('');
    },
    60_000,
  );
});

describe('a bad option fails before any input is opened', () => {
  const cases: Array<{ name: string; args: string[]; option: RegExp }> = [
    {
      name: 'run --schedule',
      args: [
        'run',
        '--model',
        NO_MODEL,
        '--source',
        NO_SOURCE,
        '--out',
        join(dir, 'run'),
        '--corrupt',
        'shot_noise',
        '--schedule',
        'bogus',
      ],
      option: /--schedule/,
    },
    {
      name: 'run --severity',
      args: ['run', '--model', NO_MODEL, '--source', NO_SOURCE, '--out', join(dir, 'run'), '--corrupt', 'shot_noise'],
      option: /severity/,
    },
    { name: 'tune --split', args: ['tune', NO_TRACE, '--split', 'sideways'], option: /--split/ },
    { name: 'tune --threads', args: ['tune', NO_TRACE, '--threads', '0'], option: /--threads/ },
    { name: 'analyze --permutations', args: ['analyze', NO_TRACE, '--permutations', '0'], option: /--permutations/ },
    {
      name: 'metrics --bins',
      args: ['metrics', '--logits', NO_TABLE, '--labels', NO_TABLE, '--bins', '0'],
      option: /--bins/,
    },
    {
      name: 'metrics --edges',
      args: ['metrics', '--logits', NO_TABLE, '--labels', NO_TABLE, '--edges', 'sideways'],
      option: /--edges/,
    },
    {
      name: 'calibrate --zeta with --out',
      args: [
        'calibrate',
        '--method',
        'temperature',
        '--logits',
        NO_TABLE,
        '--labels',
        NO_TABLE,
        '--zeta',
        '1e-17',
        '--out',
        join(dir, 'knob-settings.json'),
      ],
      option: /zeta/,
    },
    {
      name: 'corrupt --limit',
      args: [
        'corrupt',
        '--input',
        NO_IMAGES,
        '--corruption',
        'shot_noise',
        '--severity',
        '1',
        '--limit',
        '0',
        '--out',
        join(dir, 'c.idx'),
      ],
      option: /--limit/,
    },
    {
      name: 'export --provider',
      args: [
        'export',
        '--trace',
        NO_TRACE,
        '--model',
        NO_MODEL,
        '--provider',
        'abacus',
        '--out',
        join(dir, 'b.knob.zip'),
      ],
      option: /--provider/,
    },
  ];

  it.concurrent.each(cases)(
    'knob $name',
    async ({ args, option }) => {
      const result = await knob(...args);
      expect([1, 2]).toContain(result.status);
      const line = knobFailureLine(result, result.status as 1 | 2);
      expect(line).toMatch(option);
      expect(line).not.toMatch(/nonexistent-knob/);
    },
    60_000,
  );
});
