import { spawnSync } from 'node:child_process';

/**
 * The app built into a benchmark's own folder (KNOB_BUILD_DIR, electron.vite.config.ts), so a
 * benchmark never races a test run's out/; what runs from there (the knob command, its workers)
 * is what users run.
 */
export function buildInto(folder: string): void {
  const build = spawnSync('npx', ['electron-vite', 'build'], {
    encoding: 'utf8',
    env: { ...process.env, KNOB_BUILD_DIR: folder },
  });
  if (build.status !== 0) throw new Error(`electron-vite build failed:\n${build.stdout}\n${build.stderr}`);
}
