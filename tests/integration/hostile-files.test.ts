/**
 * Special files and decompression bombs, through the CLI and the API, each measured:
 *  - a FIFO, an endless device, a folder and a /proc entry under the names of data files (models,
 *    traces, datasets, tables, settings, videos), and /proc as an output folder: a typed error
 *    naming the path, without hanging, the server still serving, the process's peak memory under
 *    512 MB. The refusal is a stat() before any read; a read that hung (an endless device, a FIFO)
 *    would instead end in the bounded waits on the reply (the CLI's process killed at its timeout,
 *    the API call's own timeout), which fail the test: no wall-clock figure is asserted;
 *  - every kind of decompression bomb (zip by ratio, by declared size, by a lying header, too many
 *    entries; gzip IDX declaring enormous images, declaring more than it packs, holding more than it
 *    declares; PNG and JPEG headers declaring enormous images; deeply nested JSON): a typed error and
 *    peak memory under 512 MB.
 * The CLI runs in a process of its own (measured-cli.mjs); the API is the browser host in a process
 * of its own (host-process.ts), so each peak is that process's own (getrusage ru_maxrss).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measuredKnob } from '../support/measured-knob';
import { startHostProcess, type HostProcess, type Reply } from '../support/api-client';
import { SPECIAL_KINDS, specialFile, writeBombs, type Bomb, type SpecialKind } from '../support/hostile-files';

const dir = mkdtempSync(join(tmpdir(), 'knob-hostile-'));
const LABELS = join(dir, 'labels.json');
const PEAK_LIMIT_MB = 512;
const SPECIAL_MESSAGES: Record<SpecialKind, RegExp> = {
  fifo: /is a FIFO \(named pipe\), not a file/,
  device: /is a character device, not a file/,
  folder: /is a folder|not a dataset folder|no PNG or JPEG images found/,
  proc: /is in \/proc or \/sys/,
};

let host: HostProcess;
let bombs: Record<string, Bomb>;

beforeAll(async () => {
  writeFileSync(LABELS, '[0, 1]');
  bombs = writeBombs(dir);
  host = await startHostProcess();
  const loaded = await host.call('model.load', { path: 'default' }, 60_000);
  expect(loaded.ok).toBe(true);
}, 120_000);
afterAll(async () => host?.stop());

interface CliResult {
  status: number | null;
  line: string;
  peakMb: number;
}

/** The CLI in a process of its own (measured-knob.ts), failing with exactly one `knob:` line. */
function knob(...args: string[]): CliResult {
  const result = measuredKnob(args, 60_000);
  expect(result.lines, result.stderr).toHaveLength(1);
  return { status: result.status, line: result.lines[0]!, peakMb: result.peakMb };
}

function expectRefusedCli(result: CliResult, path: string, message: RegExp): void {
  expect(result.status, result.line).toBe(1);
  expect(result.line.startsWith(`knob: ${path}`), result.line).toBe(true);
  expect(result.line).toMatch(message);
  expect(result.line).not.toMatch(/internal error/);
  expect(result.peakMb).toBeLessThan(PEAK_LIMIT_MB);
}

async function expectRefusedApi(reply: Reply, path: string, message: RegExp): Promise<void> {
  expect(reply.ok, JSON.stringify(reply)).toBe(false);
  expect(reply.error!.code).not.toBe('INTERNAL');
  expect(reply.error!.message.startsWith(path), reply.error!.message).toBe(true);
  expect(reply.error!.message).toMatch(message);
  // Still serving.
  expect((await host.call('knobs.get')).ok).toBe(true);
}

describe('special files under the names of data files', () => {
  for (const kind of SPECIAL_KINDS) {
    it(`${kind}: refused by the CLI without hanging, naming the path, peak memory under ${PEAK_LIMIT_MB} MB`, () => {
      const out = join(dir, `out-${kind}`);
      const cases: Array<[string[], string]> = [
        [['metrics', '--logits', specialFile(dir, kind, '.npz'), '--labels', LABELS], `${kind}.npz`],
        [['replay', specialFile(dir, kind, '.arrow'), '--out', out], `${kind}.arrow`],
        [['run', '--model', specialFile(dir, kind, '.onnx'), '--source', 'default', '--out', out], `${kind}.onnx`],
        [['run', '--source', specialFile(dir, kind, '.mp4'), '--out', out, '--limit', '4'], `${kind}.mp4`],
        [
          [
            'corrupt',
            '--input',
            specialFile(dir, kind, '-images-idx3-ubyte'),
            '--corruption',
            'fog',
            '--severity',
            '1',
            '--out',
            join(dir, `${kind}.idx`),
          ],
          `${kind}-images-idx3-ubyte`,
        ],
      ];
      for (const [args, name] of cases) expectRefusedCli(knob(...args), join(dir, name), SPECIAL_MESSAGES[kind]);
    }, 120_000);

    it(`${kind}: refused by the API without hanging, naming the path, the server still serving`, async () => {
      const make = (extension: string): string => specialFile(dir, kind, `-api${extension}`);
      const attempts: Array<[string, unknown, string]> = [
        ['model.load', { path: make('.onnx'), discard: true }, `${kind}-api.onnx`],
        ['source.open', { kind: 'dataset', path: make('.npz'), discard: true }, `${kind}-api.npz`],
        ['source.open', { kind: 'video', path: make('.mp4'), discard: true }, `${kind}-api.mp4`],
        ['trace.load', { path: make('.arrow'), discard: true }, `${kind}-api.arrow`],
        ['bundle.import', { path: make('.json') }, `${kind}-api.json`],
      ];
      for (const [method, params, name] of attempts) {
        const reply = await host.call(method, params);
        const refusal =
          kind === 'folder' && method === 'bundle.import'
            ? /knob-settings\.json: cannot be read/
            : SPECIAL_MESSAGES[kind];
        await expectRefusedApi(reply, join(dir, name), refusal);
      }
    });
  }

  it('/proc as an output folder: refused at once by the CLI and the API', async () => {
    const trace = join(dir, 'small.arrow');
    const made = spawnSync(process.execPath, [
      'bin/knob.mjs',
      'run',
      '--source',
      'default',
      '--limit',
      '20',
      '--out',
      join(dir, 'small'),
    ]);
    expect(made.status).toBe(0);
    spawnSync('cp', [join(dir, 'small', 'trace.arrow'), trace]);
    expectRefusedCli(
      knob('replay', trace, '--out', '/proc/knob-output'),
      '/proc/knob-output',
      /is in \/proc or \/sys, not a place for output files/,
    );
    await host.call('source.open', { kind: 'embedded', discard: true });
    expect((await host.call('stream.runOffline', { maxFrames: 16, discard: true }, 30_000)).ok).toBe(true);
    await expectRefusedApi(
      await host.call('bundle.export', { path: '/proc/knob-export.knob.zip' }),
      '/proc', // the folder it would go in is named
      /not a place for output files/,
    );
    await expectRefusedApi(
      await host.call('trace.save', { path: '/proc/knob.arrow' }),
      '/proc',
      /not a place for output files/,
    );
  }, 60_000);

  it('FIFOs opened at once do not stall the server: the page is still served', async () => {
    const fifos = Array.from({ length: 8 }, (_, i) => specialFile(dir, 'fifo', `-many-${i}.arrow`));
    const replies = await Promise.all(fifos.map((path) => host.call('trace.load', { path, discard: true })));
    for (const reply of replies) expect(reply.error?.message).toMatch(SPECIAL_MESSAGES.fifo);
    const page = await fetch(`http://127.0.0.1:${host.port}/`);
    expect(page.status).toBe(200);
  });
});

describe('decompression bombs', () => {
  it(`zip, gzip, image and JSON bombs through the CLI: typed errors, peak memory under ${PEAK_LIMIT_MB} MB`, () => {
    const cases: Array<[string[], Bomb]> = [
      [['metrics', '--logits', bombs.npzRatio.path, '--labels', LABELS], bombs.npzRatio],
      [['metrics', '--logits', bombs.npzDeclared.path, '--labels', LABELS], bombs.npzDeclared],
      [['metrics', '--logits', bombs.npzLying.path, '--labels', LABELS], bombs.npzLying],
      [['metrics', '--logits', bombs.npzEntries.path, '--labels', LABELS], bombs.npzEntries],
      [['metrics', '--logits', bombs.json.path, '--labels', LABELS], bombs.json],
      [
        [
          'corrupt',
          '--input',
          bombs.idxHuge.path,
          '--corruption',
          'fog',
          '--severity',
          '1',
          '--out',
          join(dir, 'a.idx'),
        ],
        bombs.idxHuge,
      ],
      [
        [
          'corrupt',
          '--input',
          bombs.idxDeclared.path,
          '--corruption',
          'fog',
          '--severity',
          '1',
          '--out',
          join(dir, 'b.idx'),
        ],
        bombs.idxDeclared,
      ],
      [
        [
          'corrupt',
          '--input',
          bombs.idxLying.path,
          '--corruption',
          'fog',
          '--severity',
          '1',
          '--out',
          join(dir, 'c.idx'),
        ],
        bombs.idxLying,
      ],
      [['run', '--source', join(dir, 'huge-png'), '--out', join(dir, 'd')], bombs.png],
      [['run', '--source', join(dir, 'huge-jpeg'), '--out', join(dir, 'e')], bombs.jpeg],
    ];
    for (const [args, bomb] of cases) expectRefusedCli(knob(...args), bomb.path, bomb.refusal);
  }, 180_000);

  it(`the same bombs through the API: typed errors, the server serving, its peak memory under ${PEAK_LIMIT_MB} MB`, async () => {
    const cases: Array<[string, unknown, Bomb]> = [
      ['source.open', { kind: 'dataset', path: bombs.npzRatio.path, discard: true }, bombs.npzRatio],
      ['source.open', { kind: 'dataset', path: bombs.npzDeclared.path, discard: true }, bombs.npzDeclared],
      ['source.open', { kind: 'dataset', path: bombs.npzLying.path, discard: true }, bombs.npzLying],
      ['source.open', { kind: 'dataset', path: bombs.npzEntries.path, discard: true }, bombs.npzEntries],
      ['source.open', { kind: 'dataset', path: bombs.idxHuge.path, discard: true }, bombs.idxHuge],
      ['source.open', { kind: 'dataset', path: bombs.idxDeclared.path, discard: true }, bombs.idxDeclared],
      ['source.open', { kind: 'dataset', path: bombs.idxLying.path, discard: true }, bombs.idxLying],
      ['source.open', { kind: 'folder', path: join(dir, 'huge-png'), discard: true }, bombs.png],
      ['source.open', { kind: 'folder', path: join(dir, 'huge-jpeg'), discard: true }, bombs.jpeg],
      [
        'bundle.import',
        { path: bombs.json.path },
        { ...bombs.json, refusal: /not a Knob settings file \(JSON nested deeper than 64 levels\)/ },
      ],
    ];
    for (const [method, params, bomb] of cases)
      await expectRefusedApi(await host.call(method, params, 30_000), bomb.path, bomb.refusal);
    const peak = await host.peakRssMb();
    process.stdout.write(`hostile files: the host process peaked at ${peak.toFixed(0)} MB\n`);
    expect(peak).toBeLessThan(PEAK_LIMIT_MB);
  }, 120_000);
});
