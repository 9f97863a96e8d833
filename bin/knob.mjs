#!/usr/bin/env node
// The `knob` command. It runs the build (out/main/knob.js, written by `npm run build` and by every
// test run; KNOB_BUILD_DIR/main/knob.js when the build went there) when that is at least as new as every source file, so a command starts in a fraction
// of the time tsx takes to compile the sources; otherwise (a fresh clone, an edit since the last
// build, or KNOB_CLI_FROM_SOURCE=1) it runs the TypeScript sources through tsx, so a clone needs no
// build step and an edit is never run stale.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, process.env.KNOB_BUILD_DIR ?? 'out', 'main', 'knob.js');
const SOURCE_FOLDERS = ['src-main', 'src-shared'];

/** Whether any source file (or the build config) is newer than `time` (ms since the epoch). */
function sourcesNewerThan(time) {
  const pending = SOURCE_FOLDERS.map((folder) => join(root, folder));
  for (const file of ['package.json', 'electron.vite.config.ts'])
    if (statSync(join(root, file)).mtimeMs > time) return true;
  while (pending.length > 0) {
    const folder = pending.pop();
    if (!existsSync(folder)) continue;
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (statSync(path).mtimeMs > time) return true;
    }
  }
  return false;
}

const useBuild =
  process.env.KNOB_CLI_FROM_SOURCE !== '1' && existsSync(built) && !sourcesNewerThan(statSync(built).mtimeMs);
let main;
if (useBuild) ({ main } = await import(pathToFileURL(built).href));
else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src-main/cli/knob.ts'));
}
process.exitCode = await main(process.argv.slice(2));
