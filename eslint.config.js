import js from '@eslint/js';
import svelte from 'eslint-plugin-svelte';
import tseslint from 'typescript-eslint';
import { layeringRule } from './tools/eslint/layering-rule.js';

/**
 * The layers of docs/ARCHITECTURE.md, enforced on resolved import paths so a wrong import fails
 * `npm test` however it is spelled (tools/eslint/layering-rule.js):
 *   src-renderer -> src-shared; src-main/{electron,host,cli} -> src-main/core -> src-shared;
 *   the preload -> src-shared (types and channel names) and electron only.
 * Each layer also names the packages it may use: Node built-ins (`node:*`), onnxruntime-node, ws and
 * pino only in src-main; electron only in the shell and the preload. A new dependency therefore has
 * to be given a layer here. A layer's `folders` order its sub-folders, lowest first (sub-layers).
 */
const SHARED_PACKAGES = [
  'zod',
  'fft.js',
  'jpeg-js',
  '@stdlib/stats-base-dists-binomial-cdf',
  '@stdlib/stats-base-dists-binomial-pmf',
  '@stdlib/stats-base-dists-normal-quantile',
];
/**
 * src-shared's folders, lowest first: a folder imports only its own files, the root files
 * (errors, random, zod-issues, json-text, cancel-signal) and the folders before it, so no folder
 * cycle can be written; a new folder has to be placed here.
 */
const SHARED_FOLDERS = [
  'labels',
  'gate',
  'fusion',
  'metrics',
  'calibrators',
  'heads',
  'trace',
  'corruptions',
  'frames',
  'probes',
  'tuning',
  'analysis',
  'drift',
  'review',
  'plots',
  'api',
  'bundle',
];
/**
 * src-main/core's folders, lowest first, in the tiers of docs/ARCHITECTURE.md: what every part
 * stands on (files, logging, calls, workers), then inference, data and recordings, the engine, the
 * measurements and bundles built on it, the use cases the desk and the CLI share (explicit inputs,
 * never the session), the session (the state machine, whose transitions call use cases), the
 * services the API composes, and the API and backend on top.
 */
const CORE_FOLDERS = [
  'static',
  'files',
  'logging',
  'calls',
  'workers',
  'report',
  'inference',
  'datasets',
  'sources',
  'recording',
  'deploy',
  'recent-runs',
  'engine',
  'model-card',
  'analysis',
  'drift',
  'metrics',
  'tuning',
  'probes',
  'bundle',
  'use-cases',
  'session',
  'services',
  'api',
  'backend',
];
const LAYERS = [
  { path: 'src-shared', mayImport: [], packages: SHARED_PACKAGES, folders: SHARED_FOLDERS },
  {
    path: 'src-renderer',
    mayImport: ['src-shared'],
    packages: [...SHARED_PACKAGES, 'svelte', 'chart.js', 'chartjs-plugin-zoom'],
  },
  {
    path: 'src-main/core',
    mayImport: ['src-shared', 'package.json'],
    folders: CORE_FOLDERS,
    packages: [
      ...SHARED_PACKAGES,
      'node:*',
      'onnxruntime-node',
      'pino',
      'pino-roll',
      'env-paths',
      'apache-arrow',
      'fflate',
      'yauzl',
      'pngjs',
      'onnx-buf',
      '@bufbuild/protobuf',
      '@resvg/resvg-js',
      'tsx',
    ],
  },
  { path: 'src-main/host', mayImport: ['src-main/core', 'src-shared'], packages: ['node:*', 'ws'] },
  { path: 'src-main/cli', mayImport: ['src-main/core', 'src-shared'], packages: ['node:*'] },
  { path: 'src-main/electron', mayImport: ['src-main/core', 'src-shared'], packages: ['node:*', 'electron'] },
  { path: 'src-main/preload', mayImport: ['src-shared'], packages: ['electron'] },
];

export default tseslint.config(
  {
    ignores: [
      'out/**',
      'dist/**',
      'node_modules/**',
      'test-output/**',
      'bench-output/**',
      'resources/**',
      '.scratch/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...svelte.configs.recommended,
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: tseslint.parser, extraFileExtensions: ['.svelte'] } },
  },
  {
    plugins: { knob: { rules: { layering: layeringRule } } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // TypeScript checks names; no-undef would only duplicate it without knowing DOM or Node types.
      'no-undef': 'off',
    },
  },
  {
    files: ['src-shared/**', 'src-renderer/**', 'src-main/**'],
    rules: { 'knob/layering': ['error', { layers: LAYERS }] },
  },
  {
    files: ['src-shared/**'],
    rules: {
      'no-restricted-globals': [
        'error',
        ...[
          'window',
          'document',
          'navigator',
          'localStorage',
          'sessionStorage',
          'location',
          'process',
          'Buffer',
          'require',
          '__dirname',
        ].map((name) => ({
          name,
          message: 'src-shared runs unchanged in Node, the renderer and Workers: no host globals.',
        })),
      ],
    },
  },
  {
    files: ['tests/**', 'tools/**', '*.config.*'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
