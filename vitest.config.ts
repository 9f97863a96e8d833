import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'vitest/config';

/**
 * Three projects, in two groups: first `unit` (pure code, no build, files in parallel: `npm run
 * test:unit` is the edit loop); then, side by side (one worker per core between them) behind one build of out/
 * (which the CLI runs from), `integration` (the core through onnxruntime, real files, the CLI as a
 * user runs it, and the desk end to end in Chromium: an end-to-end file launches its own Chromium
 * and host on a free port, and its waits on the desk are bounded, so it can share the cores with a
 * CPU-heavy file) and `isolated` (shell, packaging and Electron tests, and the one integration file
 * that replaces a module with vi.mock: each file needs a module graph of its own). Vitest's default
 * is one worker fewer than the cores, which is one on a 2-core machine: the projects ask for one per
 * core. (The end-to-end files ran in a serial group until issue 28: 210 s alone; beside the
 * integration files the two took 338 s where they took 421. The isolated files ran there too, one
 * after another behind the integration files, with one core idle: 46 s.)
 */
const CORES = availableParallelism();
export default defineConfig({
  // The shell's tests run the real src-main/electron and preload against a fake 'electron' module
  // (tests/support/fake-electron): no Electron binary can be had on the build machines.
  resolve: {
    alias: { electron: fileURLToPath(new URL('./tests/support/fake-electron/index.ts', import.meta.url)) },
  },
  test: {
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: ['default', './tests/plain-summary-reporter.ts'],
    // Every result and event the backend produces in a test is checked against the API contract.
    // Logs and recent runs of the backends and commands the tests run go to test-output/, not the
    // user's folders.
    env: { KNOB_CHECK_CONTRACT: '1', KNOB_LOG_DIR: 'test-output/logs', KNOB_DATA_DIR: 'test-output/data' },
    projects: [
      {
        extends: true,
        // The desk's state modules (src-renderer/lib/desk/*.svelte.ts) use runes: compiled by Svelte
        // for the client, as the renderer's build compiles them (a Node test would otherwise get the
        // server output, whose $state is a plain field), so their tests run the code the desk runs.
        plugins: [
          svelte({
            configFile: fileURLToPath(new URL('./svelte.config.js', import.meta.url)),
            dynamicCompileOptions: () => ({ generate: 'client' }),
          }),
        ],
        // first, on its own: the later groups never share the cores with it
        test: {
          name: 'unit',
          // pure code with no module state a test changes (no vi.mock, stubbed globals or fake
          // timers here): the files of a worker share one module graph, so src-shared is imported
          // once a worker instead of once a file (the project: 72 s -> 40 s; passes shuffled)
          isolate: false,
          include: ['tests/unit/**/*.test.ts'],
          fileParallelism: true,
          maxWorkers: CORES,
          sequence: { groupOrder: 0 },
          setupFiles: ['./tests/support/typed-array-equality.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          // as in `unit`: the files of a worker share one module graph, so the core, zod's contract,
          // Arrow and Playwright are imported once a worker instead of once a file (about 2 s of CPU
          // a file; the project's CPU time 1,440 s -> 1,230 s). No file here replaces a module, and
          // those that spy on process.stdout or stderr restore them in finally; a file that must
          // replace a module (vi.mock) runs in `isolated`.
          isolate: false,
          include: ['tests/integration/**/*.test.ts', 'tests/e2e/**/*.test.ts'],
          exclude: ['tests/integration/labels-and-binding-races.test.ts'],
          fileParallelism: true,
          maxWorkers: CORES,
          sequence: { groupOrder: 1 },
          globalSetup: ['./tests/support/renderer-build.ts'],
          setupFiles: ['./tests/support/typed-array-equality.ts', './tests/support/close-browsers-after-file.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'isolated',
          // beside the integration files, one worker per core between them: the files that need a
          // process and module graph of their own (the shell's against the fake 'electron', whose module state is the app's; the
          // one integration file that replaces a module with vi.mock), and the packaging files. Each
          // works in folders of its own and reads the one build. (They ran one after another behind
          // the integration files until issue 28, one core idle for 46 s.)
          include: [
            'tests/shell/**/*.test.ts',
            'tests/packaging/**/*.test.ts',
            'tests/electron/**/*.test.ts',
            'tests/integration/labels-and-binding-races.test.ts',
          ],
          fileParallelism: true,
          maxWorkers: CORES,
          sequence: { groupOrder: 1 },
          globalSetup: ['./tests/support/renderer-build.ts'],
          setupFiles: ['./tests/support/typed-array-equality.ts'],
        },
      },
    ],
  },
});
