/**
 * The layer rules of docs/ARCHITECTURE.md are lint errors on resolved import paths
 * (tools/eslint/layering-rule.js): a forbidden import in any layer fails `npm test`, however the
 * path is spelled. Each case lints a short file placed (virtually) in that layer.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

async function layerErrors(filePath: string, code: string): Promise<string[]> {
  const source = filePath.endsWith('.svelte')
    ? `<script lang="ts">\n${code}\nvoid x;\n</script>\n`
    : `${code}\nexport const used = x;\n`;
  const [result] = await eslint.lintText(source, { filePath });
  return result!.messages
    .filter((m) => m.ruleId === 'knob/layering' || m.ruleId === 'no-restricted-globals' || m.fatal)
    .map((m) => m.message);
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
  for (const [file, code, message] of forbidden) {
    it(`refuses in ${file}: ${code}`, async () => {
      const errors = await layerErrors(file, code);
      expect(
        errors.some((e) => message.test(e)),
        errors.join('\n'),
      ).toBe(true);
    });
  }

  const allowed: Array<[string, string]> = [
    ['src-shared/gate/x.ts', "import x from 'zod';"],
    ['src-shared/gate/x.ts', "import x from '../metrics/binning';"],
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
  for (const [file, code] of allowed) {
    it(`allows in ${file}: ${code}`, async () => {
      expect(await layerErrors(file, code)).toEqual([]);
    });
  }
});
