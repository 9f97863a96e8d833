/**
 * Errors in the documented form everywhere: exit 1 with one line `knob: <file>: <problem>` for a
 * failure, exit 2 for bad usage, no file content ever quoted, internal exceptions (stack overflow,
 * impossible allocations) turned into typed errors naming their cause; the browser host's port in
 * use is one line; knob corrupt never overwrites its input.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../src-main/cli/knob';
import { serializeIdx } from '../../src-main/core/datasets/idx-file';
import { readTraceFile, writeTraceFile } from '../../src-main/core/recording/trace-arrow';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { syntheticTrace } from '../support/synthetic-trace';

const dir = mkdtempSync(join(tmpdir(), 'knob-errors-'));

async function knob(...args: string[]): Promise<{ status: number; lines: string[]; stderr: string }> {
  let stderr = '';
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  try {
    const status = await main(args);
    return { status, lines: stderr.split('\n').filter((l) => l.startsWith('knob: ')), stderr };
  } finally {
    err.mockRestore();
    out.mockRestore();
  }
}

const SECRET = 'hunter2-the-password';

describe('errors in the documented form', () => {
  it('a settings file that is not JSON: named, never quoted (API and CLI)', async () => {
    const secrets = join(dir, 'secrets.txt');
    writeFileSync(secrets, `password=${SECRET}\n`);
    const backend = new KnobBackend();
    const error = await backend.handle('bundle.import', { path: secrets }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toBe(`${secrets}: not a Knob settings file (not valid JSON)`);
    await backend.close();
    const table = join(dir, 'secret-table.csv');
    writeFileSync(table, `a,b\n1,${SECRET}\n`);
    writeFileSync(join(dir, 'labels.json'), '[0]');
    const result = await knob('metrics', '--logits', table, '--labels', join(dir, 'labels.json'));
    expect(result.status).toBe(1);
    expect(result.stderr).not.toContain(SECRET);
    expect(result.lines).toEqual([`knob: ${table}: row 0, column 1 is not a number (string)`]);
  });

  it('a trace with invalid stored settings, non-finite logits or a bad label: exit 1 naming the file', async () => {
    const trace = syntheticTrace({ frames: 20, classCount: 3, seed: 1 });
    const badSettings = join(dir, 'bad-settings.arrow');
    const good = join(dir, 'good.arrow');
    await writeTraceFile(good, trace, null);
    const n = trace.frameCount;
    const run = {
      settings: { zeta: -1 } as never,
      output: {
        g: new Float64Array(n),
        v: new Float64Array(n),
        top1: new Int32Array(n),
        confidence: new Float64Array(n),
        fusedLogits: null,
        settingsVersion: new Uint32Array(n),
        clampedInputs: 0,
      },
    };
    await writeTraceFile(badSettings, trace, run);
    const settings = await knob('replay', badSettings, '--out', join(dir, 'x'));
    expect(settings.status).toBe(1);
    expect(settings.lines).toHaveLength(1);
    expect(settings.lines[0]).toMatch(new RegExp(`^knob: ${badSettings}: the stored run settings are invalid`));
    const nan = join(dir, 'nan.arrow');
    const zStatic = trace.zStatic.slice();
    zStatic[7] = Number.NaN;
    await writeTraceFile(nan, { ...trace, zStatic }, null);
    expect((await knob('metrics', '--trace', nan)).lines).toEqual([`knob: ${nan}: z_static of frame 2 is not finite`]);
    const label = join(dir, 'label.arrow');
    const labels = trace.labels!.slice();
    labels[4] = 9;
    await writeTraceFile(label, { ...trace, labels }, null);
    expect((await knob('replay', label, '--out', join(dir, 'y'))).lines).toEqual([
      `knob: ${label}: label of frame 4 (9) is outside 0..2`,
    ]);
    await expect(readTraceFile(label)).rejects.toMatchObject({ code: 'INVALID_TRACE' });
  });

  it('deeply nested JSON is a typed error, not a stack overflow', async () => {
    const deep = join(dir, 'deep.json');
    writeFileSync(deep, `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    const result = await knob('metrics', '--logits', deep, '--labels', deep);
    expect(result.lines).toEqual([`knob: ${deep}: JSON nested deeper than 64 levels`]);
  });

  it('out-of-range numbers are bad usage (exit 2) naming the option and its range', async () => {
    const cases: Array<[string[], RegExp]> = [
      [
        ['run', '--source', 'default', '--out', join(dir, 'o'), '--batch', '1e9'],
        /--batch must be an integer from 1 to 4096, got '1e9'/,
      ],
      [
        [
          'run',
          '--source',
          'default',
          '--out',
          join(dir, 'o'),
          '--schedule',
          'sine',
          '--corrupt',
          'fog',
          '--frequency',
          '100',
        ],
        /frequencyHz: must be at most half the frame rate/,
      ],
      [
        ['run', '--source', 'default', '--out', join(dir, 'o'), '--seed', '1.5'],
        /--seed must be an integer from 0 to 4294967295/,
      ],
      [['bench', '--frames', '100000000'], /--frames must be an integer from 1 to 1000000/],
      [['table', '--images-per-condition', '0'], /--images-per-condition must be an integer from 1 to 10000/],
      [['metrics', '--input-limit', 'model'], /--input-limit: 'model' is not KIND=SIZE/],
    ];
    for (const [args, message] of cases) {
      const result = await knob(...args);
      expect(result.status, result.stderr).toBe(2);
      expect(result.lines[0]).toMatch(message);
    }
  });

  it('knob corrupt refuses to overwrite its input', async () => {
    const input = join(dir, 'input-images-idx3-ubyte');
    const bytes = serializeIdx({ dimensions: [2, 28, 28], data: new Uint8Array(2 * 784) });
    writeFileSync(input, bytes);
    const result = await knob('corrupt', '--input', input, '--corruption', 'fog', '--severity', '2', '--out', input);
    expect(result.lines).toEqual([`knob: ${input}: is the input itself; write the corrupted copy elsewhere`]);
    expect(Buffer.compare(readFileSync(input), Buffer.from(bytes))).toBe(0);
  });

  it('browser mode on a port in use: one line, exit 1', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src-main/host/web-entry.ts', '--port', String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    blocker.close();
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([
      `knob web: cannot serve on 127.0.0.1: port ${port} is already in use (choose another with --port N)`,
    ]);
  });
});
