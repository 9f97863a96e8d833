import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The shell's tests run the real src-main/electron and preload against a fake 'electron' module
  // (tests/support/fake-electron): no Electron binary can be had on the build machines.
  resolve: {
    alias: { electron: fileURLToPath(new URL('./tests/support/fake-electron/index.ts', import.meta.url)) },
  },
  test: {
    include: [
      'tests/unit/**/*.test.ts',
      'tests/integration/**/*.test.ts',
      'tests/shell/**/*.test.ts',
      'tests/packaging/**/*.test.ts',
      'tests/e2e/**/*.test.ts',
      'tests/electron/**/*.test.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // The end-to-end tests share one built renderer and one Chromium; keep files from racing.
    fileParallelism: false,
    globalSetup: ['./tests/support/renderer-build.ts'],
    reporters: ['default', './tests/plain-summary-reporter.ts'],
    // Every result and event the backend produces in a test is checked against the API contract.
    // Logs and recent runs of the backends and commands the tests run go to test-output/, not the
    // user's folders.
    env: { KNOB_CHECK_CONTRACT: '1', KNOB_LOG_DIR: 'test-output/logs', KNOB_DATA_DIR: 'test-output/data' },
  },
});
