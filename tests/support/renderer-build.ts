import { spawnSync } from 'node:child_process';

/**
 * vitest globalSetup: builds the renderer (and the Electron entry points) once per test run, so the
 * end-to-end tests drive exactly what `npm run web` serves.
 */
export default function setup(): void {
  const started = performance.now();
  const result = spawnSync('npx', ['electron-vite', 'build'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) {
    throw new Error(`electron-vite build failed:\n${result.stdout}\n${result.stderr}`);
  }
  process.stdout.write(
    `renderer built for the end-to-end tests in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
}
