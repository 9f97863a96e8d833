// The `knob` command run in a process of its own whose peak memory is reported: after main()
// returns, the process's peak resident set size (peak-memory.mjs: its own, not its parent's) goes
// to stderr as `KNOB_PEAK_RSS_KB=<kilobytes>`. It runs what bin/knob.mjs runs: the build when it
// is fresh (every test run builds it first), the sources through tsx otherwise.
// Run with `node tests/support/measured-cli.mjs ARGS`.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadKnobMain } from '../../src-main/core/workers/build-freshness.mjs';
import { peakRssKb } from './peak-memory.mjs';

const main = await loadKnobMain(join(dirname(fileURLToPath(import.meta.url)), '..', '..'));
const code = await main(process.argv.slice(2));
process.stderr.write(`\nKNOB_PEAK_RSS_KB=${peakRssKb()}\n`);
process.exitCode = code;
