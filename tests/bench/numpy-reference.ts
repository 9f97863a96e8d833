import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npyBytes } from '../support/npy-writer';

/**
 * The same work done by numpy, timed in the same bench run as the reference figure: Debian's
 * /usr/bin/python3 (numpy from python3-numpy) reads the very array the bench used from a .npy file
 * and times `body` (Python source using `z`, shape n x k) best of `repeats`. Returns milliseconds,
 * or why it could not run.
 */
export const NUMPY_PYTHON = '/usr/bin/python3';

export function numpyBestMs(
  logits: Float64Array,
  shape: [number, number],
  body: string,
  repeats = 5,
): { ms: number } | { skipped: string } {
  const folder = mkdtempSync(join(tmpdir(), 'knob-numpy-'));
  try {
    const file = join(folder, 'logits.npy');
    writeFileSync(file, npyBytes(logits, shape));
    const script = [
      'import sys, time',
      'import numpy as np',
      `z = np.load(${JSON.stringify(file)})`,
      'best = float("inf")',
      `for _ in range(${repeats}):`,
      '    t = time.perf_counter()',
      ...body.split('\n').map((line) => `    ${line}`),
      '    best = min(best, time.perf_counter() - t)',
      'print(best * 1000, np.__version__)',
    ].join('\n');
    const result = spawnSync(NUMPY_PYTHON, ['-c', script], { encoding: 'utf8', timeout: 120_000 });
    if (result.error) return { skipped: `${NUMPY_PYTHON} did not run (${result.error.message})` };
    if (result.status !== 0) return { skipped: `numpy failed: ${result.stderr.trim().split('\n').pop()}` };
    return { ms: Number(result.stdout.trim().split(' ')[0]) };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** numpy's softmax of z, row-wise, shifted by the row maximum (what every library does). */
export const NUMPY_SOFTMAX = 'e = np.exp(z - z.max(axis=1, keepdims=True))\np = e / e.sum(axis=1, keepdims=True)';
