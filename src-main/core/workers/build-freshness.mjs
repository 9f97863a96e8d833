// Whether the main build (out/main, or KNOB_BUILD_DIR/main) can stand in for the TypeScript
// sources: it exists and is at least as new as every source file. Plain JavaScript, so both
// bin/knob.mjs (before tsx is loaded) and the code that starts threads and processes from the
// sources (main-entry.ts) follow one rule. KNOB_FROM_SOURCE=1 always runs the sources.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const SOURCE_FOLDERS = ['src-main', 'src-shared'];
const CONFIG_FILES = ['package.json', 'electron.vite.config.ts'];

/** Whether any source file (or the build's config) under `root` is newer than `timeMs`. */
function sourcesNewerThan(root, timeMs) {
  for (const file of CONFIG_FILES) if (statSync(join(root, file)).mtimeMs > timeMs) return true;
  const pending = SOURCE_FOLDERS.map((folder) => join(root, folder));
  while (pending.length > 0) {
    const folder = pending.pop();
    if (!existsSync(folder)) continue;
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (statSync(path).mtimeMs > timeMs) return true;
    }
  }
  return false;
}

const answers = new Map();

/**
 * The folder of the main build's entries under the repository `root` when they may run in place of
 * the sources (the build holds `probeEntry` and nothing in the sources is newer), else null.
 * Answered once per process and root: the sources do not change under a running process (an edit
 * during a run takes effect at the next start).
 */
export function freshMainBuild(root, probeEntry = 'knob.js') {
  const key = `${root}\0${probeEntry}`;
  if (!answers.has(key)) {
    const folder = join(root, process.env.KNOB_BUILD_DIR ?? 'out', 'main');
    const probe = join(folder, probeEntry);
    const fresh =
      process.env.KNOB_FROM_SOURCE !== '1' && existsSync(probe) && !sourcesNewerThan(root, statSync(probe).mtimeMs);
    answers.set(key, fresh ? folder : null);
  }
  return answers.get(key);
}

/**
 * The `knob` command's main(), from the fresh build under `root` when there is one, else from the
 * TypeScript sources through tsx (registered here, before they are imported).
 */
export async function loadKnobMain(root) {
  const build = freshMainBuild(root);
  if (build !== null) return (await import(pathToFileURL(join(build, 'knob.js')).href)).main;
  const { register } = await import('tsx/esm/api');
  register();
  return (await import(pathToFileURL(join(root, 'src-main', 'cli', 'knob.ts')).href)).main;
}
