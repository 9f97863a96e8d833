/**
 * The layer rules of ARCHITECTURE.md are lint errors: a forbidden import in any layer fails
 * `npm test`. Each case lints a one-line file placed (virtually) in that layer.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

async function importErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\nexport const used = x;\n`, { filePath });
  return result!.messages
    .filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'no-restricted-globals')
    .map((m) => m.message);
}

describe('layer boundaries', () => {
  const forbidden: Array<[string, string]> = [
    ['src-shared/gate/x.ts', "import x from 'node:fs';"],
    ['src-shared/gate/x.ts', "import x from 'fs';"],
    ['src-shared/gate/x.ts', "import x from 'electron';"],
    ['src-shared/gate/x.ts', "import x from '../../src-main/core/api/dispatch-request';"],
    ['src-shared/gate/x.ts', "import x from '../../src-renderer/lib/format';"],
    ['src-shared/gate/x.ts', 'const x = window.innerWidth;'],
    ['src-renderer/lib/x.ts', "import x from '../../src-main/core/backend/knob-backend';"],
    ['src-renderer/lib/x.ts', "import x from 'node:path';"],
    ['src-renderer/lib/x.ts', "import x from 'electron';"],
    ['src-main/core/api/x.ts', "import x from 'electron';"],
    ['src-main/core/api/x.ts', "import x from '../../electron/main';"],
    ['src-main/core/api/x.ts', "import x from '../../host/web-host';"],
    ['src-main/host/x.ts', "import x from 'electron';"],
    ['src-main/cli/x.ts', "import x from '../electron/security';"],
    ['src-main/preload/x.ts', "import x from '../core/backend/knob-backend';"],
  ];
  for (const [file, code] of forbidden) {
    it(`refuses in ${file}: ${code}`, async () => {
      expect(await importErrors(file, code)).not.toHaveLength(0);
    });
  }

  const allowed: Array<[string, string]> = [
    ['src-shared/gate/x.ts', "import x from 'zod';"],
    ['src-renderer/lib/x.ts', "import x from '../../src-shared/gate';"],
    ['src-main/core/api/x.ts', "import x from 'node:fs';"],
    ['src-main/core/api/x.ts', "import x from '../../../src-shared/api';"],
    ['src-main/electron/x.ts', "import x from 'electron';"],
    ['src-main/electron/x.ts', "import x from '../core/backend/knob-backend';"],
    ['src-main/host/x.ts', "import x from '../core/backend/knob-backend';"],
  ];
  for (const [file, code] of allowed) {
    it(`allows in ${file}: ${code}`, async () => {
      expect(await importErrors(file, code)).toHaveLength(0);
    });
  }
});
