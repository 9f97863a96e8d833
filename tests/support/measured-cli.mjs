// The `knob` command run in a process of its own whose peak memory is reported: after main()
// returns, the process's maximum resident set size (getrusage's ru_maxrss) goes to stderr as
// `KNOB_PEAK_RSS_KB=<kilobytes>`. It runs what bin/knob.mjs runs: the build when it is fresh
// (every test run builds it first), the sources through tsx otherwise.
// Run with `node tests/support/measured-cli.mjs ARGS`.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadKnobMain } from '../../src-main/core/workers/build-freshness.mjs';

const main = await loadKnobMain(join(dirname(fileURLToPath(import.meta.url)), '..', '..'));
const code = await main(process.argv.slice(2));
process.stderr.write(`\nKNOB_PEAK_RSS_KB=${process.resourceUsage().maxRSS}\n`);
process.exitCode = code;
