/**
 * Issue 26, part 6: `knob calibrate --out` always writes a file that `--settings` reads. An
 * isotonic fit of 5,000 frames over 100 classes (a one-vs-rest map per class) is written and read
 * back; a settings limit too small for a fit's file refuses the write, naming the limit, instead
 * of leaving an unreadable file (shown on a smaller fit, whose file still passes 1 KiB).
 */
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeTraceFile } from '../../src-main/core/recording/trace-arrow';
import { knob, knobFailureLine } from '../support/knob-cli';
import { syntheticTrace } from '../support/synthetic-trace';

const dir = mkdtempSync(join(tmpdir(), 'knob-calibrate-out-'));
const trace = join(dir, 'long.arrow');
// the refusal needs only a fit whose settings pass a small limit: a trace a tenth of the work
const small = join(dir, 'small.arrow');

/** `knob ARGS` with an environment variable set. */
function knobWithEnv(env: Record<string, string>, ...args: string[]) {
  return new Promise<{ status: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['bin/knob.mjs', ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ...env },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

beforeAll(async () => {
  await writeTraceFile(trace, syntheticTrace({ frames: 5_000, classCount: 100, seed: 11 }), null);
  await writeTraceFile(small, syntheticTrace({ frames: 2_000, classCount: 10, seed: 11 }), null);
}, 120_000);

describe('knob calibrate --out', () => {
  it('an isotonic fit on 5,000 frames x 100 classes is written and read back by --settings', async () => {
    const out = join(dir, 'knob-settings.json');
    const fit = await knob('calibrate', '--trace', trace, '--method', 'isotonic', '--split', 'none', '--out', out);
    expect(fit.status, fit.stderr).toBe(0);
    const readBack = await knob('response', '--settings', out);
    expect(readBack.status, readBack.stderr).toBe(0);
    expect(statSync(out).size).toBeGreaterThan(16 * 1024); // a map per class for 100 classes: tens of kilobytes
  }, 300_000);

  it('past the settings limit the write is refused, naming the limit, and no file is left', async () => {
    const out = join(dir, 'too-small.json');
    const result = await knobWithEnv(
      { KNOB_INPUT_LIMITS: 'settings=1K' },
      'calibrate',
      '--trace',
      small,
      '--method',
      'isotonic',
      '--split',
      'none',
      '--out',
      out,
    );
    expect(knobFailureLine(result)).toMatch(/over the settings limit of 1024 bytes/);
    expect(existsSync(out)).toBe(false);
  }, 300_000);
});
