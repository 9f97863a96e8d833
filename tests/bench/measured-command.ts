import { spawnSync } from 'node:child_process';

/**
 * `node ARGS...` in a process of its own, with its wall time and peak memory (measured-cli.mjs
 * prints KNOB_PEAK_RSS_KB), the knob commands it runs taken from `buildDir` (a benchmark's own
 * build, so it never races a test run's out/).
 */
export function measuredCommand(buildDir: string, args: string[]): { ms: number; peakMb: number; stdout: string } {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    env: { ...process.env, KNOB_BUILD_DIR: buildDir },
  });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} failed (${result.status}):\n${result.stderr}`);
  const peak = /KNOB_PEAK_RSS_KB=(\d+)/.exec(result.stderr);
  return { ms, peakMb: peak === null ? Number.NaN : Number(peak[1]) / 1024, stdout: result.stdout };
}
