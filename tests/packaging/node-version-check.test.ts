/**
 * `npm start` and `npm run dist` check the Node version before anything else
 * (tools/check-node-version.mjs) and say plainly what they need; checked against versions below and
 * at or above the running one, so the test holds on any Node.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const check = (...args: string[]) =>
  spawnSync(process.execPath, ['tools/check-node-version.mjs', ...args], { encoding: 'utf8' });

describe('tools/check-node-version.mjs', () => {
  it('refuses an older Node with what is needed and the alternative', () => {
    const result = check('99.0', 'The desktop app (npm start)');
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `The desktop app (npm start) needs Node.js 99.0 or later; this is Node.js ${process.versions.node}.`,
    );
    expect(result.stderr).toContain('npm run web');
  });

  it('lets this Node through when it is new enough, and refuses bad usage', () => {
    const [major, minor] = process.versions.node.split('.');
    expect(check(`${major}.${minor}`, 'x').status).toBe(0);
    expect(check('20.0', 'x').status).toBe(0);
    expect(check('abc').status).toBe(2);
  });

  it('runs first in npm start and npm run dist', () => {
    const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    for (const script of ['start', 'dist'])
      expect(scripts[script], script).toMatch(/^node tools\/check-node-version\.mjs 22\.12 /);
  });
});
