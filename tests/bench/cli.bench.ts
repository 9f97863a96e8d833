/**
 * The knob command's start-up (issue 28: at most 3 times a bare `node -e 0`): `knob --help` from
 * the build (its own copy in bench-output/cli-build, so it never races a test run's out/), through
 * bin/knob.mjs as users run it (npx adds its own start-up, which is npm's, on top), a command's
 * full usage, and from the sources through tsx, each against a bare Node start measured in the same run. Wall-clock
 * figures are printed, never asserted.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildInto } from './bench-build';
import { row } from './bench-timing';

const BUILD_DIR = 'bench-output/cli-build';
const RUNS = 7;

/** Median wall time of `RUNS` runs of `node args...` (after one warm-up), in ms. */
function medianMs(args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const samples: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const started = performance.now();
    const result = spawnSync(process.execPath, args, { encoding: 'utf8', env });
    if (result.status !== 0) throw new Error(`node ${args.join(' ')} failed:\n${result.stderr}`);
    if (i > 0) samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b)[RUNS >> 1]!;
}

export function runCliBench(): void {
  process.stdout.write(`\n== cli: knob --help start-up, median of ${RUNS} runs ==\n`);
  buildInto(BUILD_DIR);
  const built = pathToFileURL(resolve(BUILD_DIR, 'main', 'knob.js')).href;
  const bare = medianMs(['-e', '0']);
  const fromBuild = medianMs(['-e', `import(${JSON.stringify(built)}).then((m) => m.main(['--help']))`]);
  const fromBin = medianMs(['bin/knob.mjs', '--help'], { ...process.env, KNOB_BUILD_DIR: BUILD_DIR });
  const commandHelp = medianMs(['bin/knob.mjs', 'tune', '--help'], { ...process.env, KNOB_BUILD_DIR: BUILD_DIR });
  const fromSource = medianMs(['bin/knob.mjs', '--help'], { ...process.env, KNOB_FROM_SOURCE: '1' });
  row('node -e 0', `${bare.toFixed(0)} ms`);
  row(
    'knob --help from the build',
    `${fromBuild.toFixed(0)} ms = ${(fromBuild / bare).toFixed(1)} x bare (target <= 3 x)`,
  );
  row(
    'bin/knob.mjs --help (the command users run: checks the build is current)',
    `${fromBin.toFixed(0)} ms = ${(fromBin / bare).toFixed(1)} x bare (target <= 3 x)`,
  );
  row(
    "bin/knob.mjs tune --help (a command's full usage)",
    `${commandHelp.toFixed(0)} ms = ${(commandHelp / bare).toFixed(1)} x bare`,
  );
  row('knob --help from the sources (tsx)', `${fromSource.toFixed(0)} ms = ${(fromSource / bare).toFixed(1)} x bare`);
  row('build against sources', `${(fromSource / fromBuild).toFixed(1)} x faster`);
}
