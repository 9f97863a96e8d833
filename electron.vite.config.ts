import { resolve } from 'node:path';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { defineConfig } from 'electron-vite';

// Where the build goes: out/ (what `npm run web`, `npm start` and the tests use), or KNOB_BUILD_DIR
// (the desk benchmark builds its own copy, so it never races a test run's build).
const OUT = process.env.KNOB_BUILD_DIR ?? 'out';

// Pure-JavaScript dependencies are bundled into the main build rather than left external, as
// electron-vite leaves `dependencies` by default: apache-arrow's ESM build alone is over 500 files
// and zod and protobuf over 200 each, and resolving about a thousand files was most of every
// `knob` command's and worker thread's start (`knob tune --help` 0.93 s -> 0.37 s on this 2-core
// machine; two CLI-heavy test files 91 s -> 65 s). Native addons (onnxruntime-node,
// @resvg/resvg-js) and what loads files by path at run time (tsx, ws) stay external.
const BUNDLED_DEPENDENCIES = [
  'apache-arrow',
  'zod',
  '@bufbuild/protobuf',
  '@stdlib/stats-base-dists-binomial-cdf',
  '@stdlib/stats-base-dists-binomial-pmf',
  '@stdlib/stats-base-dists-normal-quantile',
  'pngjs',
  'fflate',
  'fft.js',
  'jpeg-js',
  'env-paths',
  'onnx-buf',
  'yauzl',
  // used in-process (a rolling file, no transport thread): bundled, date-fns is one file, not 250
  'pino',
  'pino-roll',
];

// Three builds from one config: the Electron main process, the sandboxed preload (CommonJS, as
// sandboxed preloads must be) and the renderer, which browser mode serves unchanged.
export default defineConfig({
  main: {
    build: {
      outDir: `${OUT}/main`,
      externalizeDeps: { exclude: BUNDLED_DEPENDENCIES },
      // The inference process, its session thread and the metrics worker are entries of their own:
      // the engine starts out/main/inference-process.js (which starts inference-worker.js) and
      // out/main/metrics-worker.js; the knob command is one too (out/main/knob.js).
      rollupOptions: {
        input: {
          index: resolve('src-main/electron/main.ts'),
          'inference-process': resolve('src-main/core/inference/inference-process.ts'),
          'inference-worker': resolve('src-main/core/inference/inference-worker.ts'),
          'metrics-worker': resolve('src-main/core/use-cases/metrics-worker.ts'),
          'bare-session-worker': resolve('src-main/core/engine/bare-session-worker.ts'),
          'metric-suite-helper': resolve('src-main/core/metrics/metric-suite-helper.ts'),
          'tuning-worker': resolve('src-main/core/tuning/tuning-worker.ts'),
          'analysis-worker': resolve('src-main/core/analysis/analysis-worker.ts'),
          'threshold-worker': resolve('src-main/core/drift/threshold-worker.ts'),
          'field-worker': resolve('src-main/core/use-cases/field-worker.ts'),
          'live-watch-worker': resolve('src-main/core/recording/live-watch-worker.ts'),
          'heads-worker': resolve('src-main/core/use-cases/heads-worker.ts'),
          // the knob command (bin/knob.mjs runs it when it is newer than the sources)
          knob: resolve('src-main/cli/knob.ts'),
        },
        // Shared chunks beside the entries, not in chunks/: code that starts a worker or the
        // inference process finds its entry beside import.meta.url, whichever file it lands in.
        output: { chunkFileNames: '[name]-[hash].js' },
      },
    },
  },
  preload: {
    build: {
      outDir: `${OUT}/preload`,
      rollupOptions: {
        input: { index: resolve('src-main/preload/index.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: 'src-renderer',
    base: './',
    build: {
      outDir: resolve(OUT, 'renderer'),
      rollupOptions: { input: resolve('src-renderer/index.html') },
    },
    plugins: [svelte({ configFile: resolve('svelte.config.js') })],
  },
});
