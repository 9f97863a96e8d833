/**
 * The layer rules of docs/ARCHITECTURE.md are lint errors on resolved import paths
 * (tools/eslint/layering-rule.js): a forbidden import in any layer fails `npm test`, however the
 * path is spelled. Each case lints a short file placed (virtually) in that layer. The same rule
 * orders a layer's sub-folders (`folders`, lowest first), so a folder cycle cannot be written.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

async function layerErrors(filePath: string, code: string, linter = eslint): Promise<string[]> {
  const source = filePath.endsWith('.svelte')
    ? `<script lang="ts">\n${code}\nvoid x;\n</script>\n`
    : `${code}\nexport const used = x;\n`;
  const [result] = await linter.lintText(source, { filePath });
  return result!.messages
    .filter((m) => m.ruleId === 'knob/layering' || m.ruleId === 'no-restricted-globals' || m.fatal)
    .map((m) => m.message);
}

/** One test a case: linting the file in its place reports an error the pattern matches. */
function itRefuses(cases: Array<[file: string, code: string, message: RegExp]>): void {
  for (const [file, code, message] of cases) {
    it(`refuses in ${file}: ${code}`, async () => {
      const errors = await layerErrors(file, code);
      expect(
        errors.some((e) => message.test(e)),
        errors.join('\n'),
      ).toBe(true);
    });
  }
}

/** One test a case: linting the file in its place reports no layer error. */
function itAllows(cases: Array<[file: string, code: string]>): void {
  for (const [file, code] of cases) {
    it(`allows in ${file}: ${code}`, async () => {
      expect(await layerErrors(file, code)).toEqual([]);
    });
  }
}

describe('layer boundaries on resolved paths', () => {
  const forbidden: Array<[string, string, RegExp]> = [
    // The three cases the text-matching rules missed.
    [
      'src-main/core/api/x.ts',
      "import x from '../../../src-main/host/web-host';",
      /src-main\/core may not import src-main\/host/,
    ],
    [
      'src-shared/gate/x.ts',
      "import x from 'onnxruntime-node';",
      /src-shared may not use the package 'onnxruntime-node'/,
    ],
    ['src-renderer/lib/x.ts', "import x from 'ws';", /src-renderer may not use the package 'ws'/],
    // Layers, spelled every way.
    ['src-main/core/api/x.ts', "import x from '../../electron/main';", /may not import src-main\/electron/],
    ['src-main/core/api/x.ts', "import x from '../../host/web-host';", /may not import src-main\/host/],
    ['src-main/core/api/x.ts', "import x from '../../cli/knob';", /may not import src-main\/cli/],
    ['src-main/core/api/x.ts', "export { x } from '../../../src-renderer/lib/format';", /may not import src-renderer/],
    ['src-main/core/api/x.ts', "const x = await import('../../host/web-host');", /may not import src-main\/host/],
    [
      'src-shared/gate/x.ts',
      "import x from '../../src-main/core/api/dispatch-request';",
      /src-shared may not import src-main\/core/,
    ],
    [
      'src-shared/gate/x.ts',
      "import type x from '../../src-renderer/lib/format';",
      /src-shared may not import src-renderer/,
    ],
    [
      'src-renderer/lib/x.ts',
      "import x from '../../src-main/core/session/session';",
      /src-renderer may not import src-main\/core/,
    ],
    [
      'src-renderer/components/X.svelte',
      "import x from '../../src-main/host/web-host';",
      /src-renderer may not import src-main\/host/,
    ],
    ['src-main/cli/x.ts', "import x from '../electron/security';", /src-main\/cli may not import src-main\/electron/],
    ['src-main/host/x.ts', "import x from '../cli/knob';", /src-main\/host may not import src-main\/cli/],
    [
      'src-main/preload/x.ts',
      "import x from '../core/session/session';",
      /src-main\/preload may not import src-main\/core/,
    ],
    ['src-shared/gate/x.ts', "import x from '../../package.json';", /resolves outside every layer/],
    // Packages per layer.
    ['src-shared/gate/x.ts', "import x from 'node:fs';", /may not use the package 'node:\*'/],
    ['src-shared/gate/x.ts', "import x from 'fs/promises';", /may not use the package 'node:\*'/],
    ['src-shared/gate/x.ts', "import x from 'electron';", /may not use the package 'electron'/],
    ['src-shared/gate/x.ts', "import x from 'pino';", /may not use the package 'pino'/],
    ['src-renderer/lib/x.ts', "import x from 'node:path';", /may not use the package 'node:\*'/],
    ['src-renderer/lib/x.ts', "import x from 'onnxruntime-node';", /may not use the package 'onnxruntime-node'/],
    ['src-renderer/lib/x.ts', "import x from 'electron';", /may not use the package 'electron'/],
    ['src-main/core/api/x.ts', "import x from 'electron';", /src-main\/core may not use the package 'electron'/],
    ['src-main/core/api/x.ts', "import x from 'ws';", /src-main\/core may not use the package 'ws'/],
    ['src-main/host/x.ts', "import x from 'electron';", /may not use the package 'electron'/],
    ['src-main/cli/x.ts', "const x = require('electron');", /may not use the package 'electron'/],
    ['src-main/preload/x.ts', "import x from 'node:fs';", /src-main\/preload may not use the package 'node:\*'/],
    // Host globals in the shared layer.
    ['src-shared/gate/x.ts', 'const x = window.innerWidth;', /no host globals/],
  ];
  itRefuses(forbidden);

  const allowed: Array<[string, string]> = [
    ['src-shared/gate/x.ts', "import x from 'zod';"],
    ['src-shared/calibrators/x.ts', "import x from '../metrics/binning';"],
    ['src-renderer/lib/x.ts', "import x from '../../src-shared/gate';"],
    ['src-renderer/components/X.svelte', "import x from '../../src-shared/gate';"],
    ['src-main/core/api/x.ts', "import x from 'node:fs';"],
    ['src-main/core/api/x.ts', "import x from 'onnxruntime-node';"],
    ['src-main/core/api/x.ts', "import x from '../../../src-shared/api';"],
    ['src-main/core/api/x.ts', "import x from '../../../package.json';"],
    ['src-main/electron/x.ts', "import x from 'electron';"],
    ['src-main/electron/x.ts', "import x from '../core/session/session';"],
    ['src-main/host/x.ts', "import x from 'ws';"],
    ['src-main/host/x.ts', "import x from '../core/session/session';"],
    ['src-main/preload/x.ts', "import x from 'electron';"],
    ['src-main/preload/x.ts', "import x from '../../src-shared/api/bridge';"],
    ['tests/unit/x.ts', "import x from '../../src-main/host/web-host';"],
  ];
  itAllows(allowed);
});

describe('sub-layers: the folder order of src-shared', () => {
  const forbidden: Array<[string, string, RegExp]> = [
    // The cycle the issue named (fusion <-> calibrators): fusion sits below calibrators.
    [
      'src-shared/fusion/x.ts',
      "import x from '../calibrators/output-calibrator';",
      /src-shared\/fusion may not import src-shared\/calibrators \(resolved from '\.\.\/calibrators\/output-calibrator'\): in src-shared a folder imports only the folders before it \(\(root files\) < labels < gate < fusion < metrics < calibrators < heads < trace < .* < bundle, lowest first\)/,
    ],
    [
      'src-shared/gate/x.ts',
      "import x from '../metrics/order-statistics';",
      /src-shared\/gate may not import src-shared\/metrics/,
    ],
    [
      'src-shared/metrics/x.ts',
      "import type x from '../trace/trace';",
      /src-shared\/metrics may not import src-shared\/trace/,
    ],
    [
      'src-shared/trace/x.ts',
      "export * from '../probes/step-probe';",
      /src-shared\/trace may not import src-shared\/probes/,
    ],
    // A folder's index, and a path that leaves the layer and comes back.
    [
      'src-shared/gate/x.ts',
      "import x from '../corruptions';",
      /src-shared\/gate may not import src-shared\/corruptions/,
    ],
    [
      'src-shared/gate/x.ts',
      "import x from '../../src-shared/api/contract';",
      /src-shared\/gate may not import src-shared\/api/,
    ],
    // Root files are the lowest tier.
    [
      'src-shared/x.ts',
      "import x from './gate/gate-settings';",
      /src-shared \(root files\) may not import src-shared\/gate/,
    ],
    // A folder not in the order fails, itself and for whoever imports it.
    [
      'src-shared/newfolder/x.ts',
      "import x from '../errors';",
      /src-shared\/newfolder is not in the folder order of src-shared/,
    ],
    [
      'src-shared/bundle/x.ts',
      "import x from '../newfolder/y';",
      /src-shared\/newfolder is not in the folder order of src-shared/,
    ],
  ];
  itRefuses(forbidden);

  const allowed: Array<[string, string]> = [
    ['src-shared/calibrators/x.ts', "import x from '../fusion/logits';"],
    ['src-shared/trace/x.ts', "import x from '../metrics/scores';"],
    ['src-shared/bundle/x.ts', "import x from '../api/model-options';"],
    ['src-shared/gate/x.ts', "import x from './gate-kernel';"],
    ['src-shared/gate/x.ts', "import x from '../errors';"],
    ['src-shared/x.ts', "import x from './errors';"],
  ];
  itAllows(allowed);
});

describe('sub-layers: the rule on any layer and order', () => {
  /** The repository's config with src-main/core given only the sub-folders `folders`. */
  function ordered(folders: string[]): ESLint {
    const layers = [{ path: 'src-main/core', mayImport: [], packages: [], folders }];
    return new ESLint({ cwd: process.cwd(), overrideConfig: { rules: { 'knob/layering': ['error', { layers }] } } });
  }

  it('refuses a lower folder importing a higher one, naming both and the order', async () => {
    expect(
      await layerErrors('src-main/core/files/x.ts', "import x from '../engine/y';", ordered(['files', 'engine'])),
    ).toEqual([
      "src-main/core/files may not import src-main/core/engine (resolved from '../engine/y'): in src-main/core a folder imports only the folders before it ((root files) < files < engine, lowest first).",
    ]);
  });

  it('allows a higher folder importing a lower one, the root files and its own folder', async () => {
    const linter = ordered(['files', 'engine']);
    expect(await layerErrors('src-main/core/engine/x.ts', "import x from '../files/y';", linter)).toEqual([]);
    expect(await layerErrors('src-main/core/engine/x.ts', "import x from '../app-version';", linter)).toEqual([]);
    expect(await layerErrors('src-main/core/engine/deep/x.ts', "import x from '../y';", linter)).toEqual([]);
  });

  it('refuses a root file importing a folder', async () => {
    expect(await layerErrors('src-main/core/x.ts', "import x from './files/y';", ordered(['files']))).toEqual([
      "src-main/core (root files) may not import src-main/core/files (resolved from './files/y'): in src-main/core a folder imports only the folders before it ((root files) < files, lowest first).",
    ]);
  });

  it('refuses a folder that is not in the order', async () => {
    expect(await layerErrors('src-main/core/session/x.ts', "import x from '../files/y';", ordered(['files']))).toEqual([
      'src-main/core/session is not in the folder order of src-main/core ((root files) < files, lowest first): place it in `folders` in eslint.config.js.',
    ]);
    expect(await layerErrors('src-main/core/files/x.ts', "import x from '../session/y';", ordered(['files']))).toEqual([
      'src-main/core/session is not in the folder order of src-main/core ((root files) < files, lowest first): place it in `folders` in eslint.config.js.',
    ]);
  });

  it('fails a two-folder cycle in either order', async () => {
    // a/x.ts imports b, b/y.ts imports a: whichever folder is placed first, its import fails.
    for (const [order, refused] of [
      [['a', 'b'], 'src-main/core/a may not import src-main/core/b'],
      [['b', 'a'], 'src-main/core/b may not import src-main/core/a'],
    ] as const) {
      const linter = ordered([...order]);
      const errors = [
        ...(await layerErrors('src-main/core/a/x.ts', "import x from '../b/y';", linter)),
        ...(await layerErrors('src-main/core/b/y.ts', "import x from '../a/x';", linter)),
      ];
      expect(errors, order.join(' < ')).toHaveLength(1);
      expect(errors[0]).toContain(refused);
    }
  });

  it('without `folders` a layer does not check its folders', async () => {
    const layers = [{ path: 'src-main/core', mayImport: [], packages: [] }];
    const linter = new ESLint({
      cwd: process.cwd(),
      overrideConfig: { rules: { 'knob/layering': ['error', { layers }] } },
    });
    expect(await layerErrors('src-main/core/a/x.ts', "import x from '../b/y';", linter)).toEqual([]);
  });
});
