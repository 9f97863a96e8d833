// `npm start` and `npm run dist` run this (after check-node-version.mjs). Install scripts are off
// (.npmrc), so `npm ci` does not fetch the Electron binary; on a machine with internet access this
// fetches it once.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const electronDir = dirname(require.resolve('electron/package.json'));
const { version } = JSON.parse(readFileSync(join(electronDir, 'package.json'), 'utf8'));
const versionFile = join(electronDir, 'dist', 'version');
const installed = existsSync(versionFile) && readFileSync(versionFile, 'utf8').replace(/^v/, '').trim() === version;
if (!installed) {
  process.stdout.write(`Fetching the Electron ${version} binary (first start only)...\n`);
  const result = spawnSync(process.execPath, [join(electronDir, 'install.js')], { stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write(
      'Could not fetch the Electron binary (no internet access?). Browser mode needs none: npm run web\n',
    );
    process.exit(1);
  }
}
