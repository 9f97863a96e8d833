import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshMainBuild } from './build-freshness.mjs';

/** The repository's root, seen from this file in the sources (src-main/core/workers). */
const SOURCE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Where an entry's code is, and whether it is TypeScript that needs tsx to run. */
export interface MainEntry {
  path: string;
  typescript: boolean;
}

/**
 * Where a thread or process the app starts finds its code: the main build's entry `name`
 * (electron.vite.config.ts), seen from the module that starts it (`callerUrl`).
 * - In a build (the app, a packaged app, out/main): the compiled `<name>.js` beside the caller
 *   (shared chunks sit beside the entries). Never from the environment: a packaged app must not
 *   be pointed at other files.
 * - From the sources (the tests, the CLI through tsx): the build's `<name>.js` when that build is
 *   at least as new as every source file (build-freshness.mjs, the rule bin/knob.mjs follows), so
 *   a worker starts without compiling the sources again; otherwise `<name>.ts` beside the caller,
 *   through tsx.
 */
export function mainEntry(callerUrl: string, name: string): MainEntry {
  const caller = fileURLToPath(callerUrl);
  if (!caller.endsWith('.ts')) return { path: join(dirname(caller), `${name}.js`), typescript: false };
  const build = freshMainBuild(SOURCE_ROOT, `${name}.js`);
  if (build !== null) return { path: join(build, `${name}.js`), typescript: false };
  return { path: join(dirname(caller), `${name}.ts`), typescript: true };
}
