import { builtinModules } from 'node:module';
import js from '@eslint/js';
import svelte from 'eslint-plugin-svelte';
import tseslint from 'typescript-eslint';

/**
 * Layer boundaries of ARCHITECTURE.md, enforced here so a wrong import fails `npm test`:
 *   src-renderer -> src-shared only (never src-main, node:*, electron)
 *   src-main/{electron,host,cli} -> src-main/core -> src-shared
 *   src-main/core and src-main/{host,cli} never import electron
 *   src-shared imports no node:*, no electron, no DOM (its tsconfig has no DOM lib either)
 */
const nodeBuiltins = {
  paths: builtinModules.map((name) => ({ name, message: 'Node built-ins are not allowed in this layer.' })),
  patterns: [{ group: ['node:*'], message: 'Node built-ins are not allowed in this layer.' }],
};
const electronPackage = {
  name: 'electron',
  message: 'Only src-main/electron and src-main/preload may import electron.',
};
const mainImport = {
  regex: '(^|/)src-main(/|$)',
  message: 'This layer may not import src-main (talk to the backend through src-shared/api).',
};
const rendererImport = { regex: '(^|/)src-renderer(/|$)', message: 'Nothing imports the renderer.' };
const shellImport = {
  regex: '(^|\\.\\./)(electron|host|cli|preload)(/|$)',
  message: 'src-main/core is below the shells (electron, host, cli, preload) and may not import them.',
};

function restrict(...rules) {
  return {
    'no-restricted-imports': [
      'error',
      {
        paths: rules.flatMap((rule) => rule.paths ?? []),
        patterns: rules.flatMap((rule) => rule.patterns ?? []),
      },
    ],
  };
}

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-output/**', 'bench-output/**', 'resources/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...svelte.configs.recommended,
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: tseslint.parser, extraFileExtensions: ['.svelte'] } },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // TypeScript checks names; no-undef would only duplicate it without knowing DOM or Node types.
      'no-undef': 'off',
    },
  },
  {
    files: ['src-shared/**'],
    rules: {
      ...restrict(nodeBuiltins, { paths: [electronPackage] }, { patterns: [mainImport, rendererImport] }),
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
    files: ['src-renderer/**'],
    rules: restrict(nodeBuiltins, { paths: [electronPackage] }, { patterns: [mainImport] }),
  },
  {
    files: ['src-main/core/**'],
    rules: restrict({ paths: [electronPackage] }, { patterns: [shellImport, rendererImport] }),
  },
  {
    files: ['src-main/host/**', 'src-main/cli/**'],
    rules: restrict(
      { paths: [electronPackage] },
      {
        patterns: [
          { regex: '(^|\\.\\./)(electron|preload)(/|$)', message: 'host and cli run without Electron.' },
          rendererImport,
        ],
      },
    ),
  },
  {
    files: ['src-main/preload/**'],
    rules: restrict(nodeBuiltins, {
      patterns: [
        { regex: '(^|\\.\\./)(core|host|cli)(/|$)', message: 'The sandboxed preload only bridges IPC.' },
        rendererImport,
      ],
    }),
  },
  {
    files: ['tests/**', 'tools/**', '*.config.*'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
