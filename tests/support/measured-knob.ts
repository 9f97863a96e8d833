import { spawnSync } from 'node:child_process';

/**
 * `knob ARGS...` in a process of its own (measured-cli.mjs), with its one `knob:` failure line (or
 * null when it succeeded), its stdout and the process's own peak resident memory in MB (VmHWM,
 * peak-memory.mjs): what a memory budget is held against. `timeoutMs` is a hang guard only.
 */
export interface MeasuredKnob {
  status: number | null;
  stdout: string;
  line: string | null;
  /** Every `knob:` line written to stderr (a failure writes exactly one). */
  lines: string[];
  stderr: string;
  peakMb: number;
}

export function measuredKnob(args: string[], timeoutMs = 120_000): MeasuredKnob {
  const result = spawnSync(process.execPath, ['tests/support/measured-cli.mjs', ...args], {
    encoding: 'utf8',
    timeout: timeoutMs,
  });
  const measured = /KNOB_PEAK_RSS_KB=(\d+)/.exec(result.stderr);
  if (measured === null)
    throw new Error(`no measurement (status ${result.status}, ${result.signal}): ${result.stderr}`);
  const lines = result.stderr.split('\n').filter((l) => l.startsWith('knob: '));
  return {
    status: result.status,
    stdout: result.stdout,
    line: lines[0] ?? null,
    lines,
    stderr: result.stderr,
    peakMb: Number(measured[1]) / 1024,
  };
}
