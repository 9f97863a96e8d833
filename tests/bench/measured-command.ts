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

/**
 * The command `runs` times, one after another: the median run (its output and peak memory) and
 * every run's wall time in the order run. The first run after the benchmark has built the app and
 * written its inputs was 0.3-0.5 s slower than the next ones on the 2-core build machine
 * (2026-12-07; probably the parent's garbage collector still at work on what it wrote, on the same
 * two cores), so a single run says more about the moment than about the command.
 */
export function measuredCommandRuns(
  buildDir: string,
  args: string[],
  runs = 3,
): { ms: number; peakMb: number; stdout: string; runsMs: number[] } {
  const measured = Array.from({ length: runs }, () => measuredCommand(buildDir, args));
  const median = [...measured].sort((a, b) => a.ms - b.ms)[Math.floor(runs / 2)]!;
  return { ...median, runsMs: measured.map((m) => m.ms) };
}

/** "1.87 s (1.83, 1.87, 2.39 s)": a median and every run, in seconds. */
export function secondsOfRuns(measured: { ms: number; runsMs: number[] }): string {
  return `${(measured.ms / 1000).toFixed(2)} s (runs ${measured.runsMs.map((ms) => (ms / 1000).toFixed(2)).join(', ')} s)`;
}
