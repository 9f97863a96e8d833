/**
 * The `knob` command run in a process of its own whose peak memory is reported: after main()
 * returns, the process's maximum resident set size (getrusage's ru_maxrss) goes to stderr as
 * `KNOB_PEAK_RSS_KB=<kilobytes>`, with the time main() took as `KNOB_ELAPSED_MS` (not the start-up). Run with `node --import tsx tests/support/measured-cli.ts ARGS`.
 */
import { main } from '../../src-main/cli/knob';

const started = performance.now();
const code = await main(process.argv.slice(2));
const elapsedMs = performance.now() - started;
process.stderr.write(`\nKNOB_PEAK_RSS_KB=${process.resourceUsage().maxRSS} KNOB_ELAPSED_MS=${elapsedMs.toFixed(0)}\n`);
process.exitCode = code;
