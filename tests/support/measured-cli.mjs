// The `knob` command run in a process of its own whose peak memory is reported: after main()
// returns, the process's maximum resident set size (getrusage's ru_maxrss) goes to stderr as
// `KNOB_PEAK_RSS_KB=<kilobytes>`.
// It runs what bin/knob.mjs runs: the build when it is fresh (every test run builds it first), the
// sources through tsx otherwise. Run with `node tests/support/measured-cli.mjs ARGS`.
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freshMainBuild } from '../../src-main/core/workers/build-freshness.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const build = freshMainBuild(root);
let main;
if (build !== null) ({ main } = await import(pathToFileURL(join(build, 'knob.js')).href));
else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../../src-main/cli/knob.ts'));
}
const code = await main(process.argv.slice(2));
process.stderr.write(`\nKNOB_PEAK_RSS_KB=${process.resourceUsage().maxRSS}\n`);
process.exitCode = code;
