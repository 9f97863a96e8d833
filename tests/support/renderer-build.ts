import { spawnSync } from 'node:child_process';

/**
 * vitest globalSetup of the integration and isolated projects: builds the renderer and the main
 * entries (the CLI's among them) once per test run, so the end-to-end tests drive exactly what
 * `npm run web` serves and the CLI tests run what users run. Both projects' setups run in vitest's
 * own process, so the second finds the first's build done.
 */
const BUILT = 'KNOB_TEST_BUILD_DONE';

export default function setup(): void {
  if (process.env[BUILT] === '1') return;
  const started = performance.now();
  const result = spawnSync('npx', ['electron-vite', 'build'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) {
    throw new Error(`electron-vite build failed:\n${result.stdout}\n${result.stderr}`);
  }
  process.env[BUILT] = '1';
  process.stdout.write(
    `renderer built for the end-to-end tests in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
}
