import { spawn } from 'node:child_process';

/** `knob ARGS...` in a child process (bin/knob.mjs, as a user runs it): its exit status and output. */
export function knob(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return knobWithEnvironment({}, ...args);
}

/** `knob ARGS...` with these environment variables set beside the test's own (KNOB_DATA_DIR, say). */
export function knobWithEnvironment(
  environment: Record<string, string>,
  ...args: string[]
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/knob.mjs', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...environment },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * A failure as the CLI reports one: exactly one 'knob:' line on stderr and exit 1 (a failure) or,
 * with `status` 2, bad usage (an option's value out of its range).
 */
export function knobFailureLine(result: { status: number | null; stderr: string }, status: 1 | 2 = 1): string {
  const lines = result.stderr
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('knob:'));
  if (result.status !== status || lines.length !== 1)
    throw new Error(`expected one 'knob:' line and exit ${status}, got ${result.status}:\n${result.stderr}`);
  return lines[0]!;
}

/**
 * `knob run` of the embedded stream through the shipped model with a stepped corruption schedule
 * (`levels` as --levels takes them, FRAME:SEVERITY,...), into `out`; fails the test when it fails.
 */
export async function steppedCorruptionRun(
  out: string,
  corruption: string,
  frames: number,
  levels: string,
): Promise<void> {
  const run = await knob(
    'run',
    '--source',
    'default',
    '--limit',
    String(frames),
    '--schedule',
    'step',
    '--corrupt',
    corruption,
    '--levels',
    levels,
    '--out',
    out,
  );
  if (run.status !== 0) throw new Error(`knob run failed (${run.status}):\n${run.stderr}`);
}

/**
 * `knob run` of the embedded stream through a model (the shipped one by default) as a mixed stream of conditions:
 * contrast, shot noise and speckle noise, one drawn every 200 frames and held at severity 5, with
 * the model's features recorded, into `out`; fails the test when it fails.
 */
export async function mixedConditionsRun(out: string, frames: number, model = 'default'): Promise<void> {
  const run = await knob(
    'run',
    '--model',
    model,
    '--source',
    'default',
    '--limit',
    String(frames),
    '--record-features',
    '--schedule',
    'random',
    '--corruptions',
    'contrast,shot_noise,speckle_noise',
    '--hold',
    '200',
    '--min-severity',
    '5',
    '--max-severity',
    '5',
    '--out',
    out,
  );
  if (run.status !== 0) throw new Error(`knob run failed: ${run.stderr}`);
}
