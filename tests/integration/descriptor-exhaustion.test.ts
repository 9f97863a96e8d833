/**
 * File opens that fail for want of descriptors (src-main/core/files/descriptor-exhaustion.ts): in a
 * process whose descriptors are all taken (a real EMFILE, under `ulimit -n`), reading through the
 * one way in and writing through the one way out fail with NOT_AVAILABLE saying "too many open
 * files ... retry", not a complaint about the path; with descriptors freed, the same calls work.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { descriptorExhaustion } from '../../src-main/core/files/descriptor-exhaustion';

describe('running out of file descriptors', () => {
  it('is a retryable NOT_AVAILABLE for reads and writes, and the retry works', () => {
    const result = spawnSync(
      'bash',
      ['-c', 'ulimit -n 128 && exec "$0" --import tsx tests/support/descriptor-exhaustion-child.ts', process.execPath],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(result.status, result.stderr).toBe(0);
    const outcome = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(outcome.openError).toBe('EMFILE');
    for (const key of ['read', 'write']) {
      expect(outcome[key], key).toMatchObject({ code: 'NOT_AVAILABLE' });
      expect((outcome[key] as { message: string }).message, key).toMatch(/too many open files \(EMFILE.*retry$/);
    }
    expect(outcome.retriedRead).toBe('ok');
    expect(outcome.retriedWrite).toBe('ok');
  });

  it('ENFILE (the system out of descriptors) likewise; any other error is not this one', () => {
    const enfile = Object.assign(new Error('ENFILE: file table overflow, open'), { code: 'ENFILE', errno: -23 });
    expect(descriptorExhaustion('/data/a.csv', enfile, 'be read')?.toPayload()).toEqual({
      code: 'NOT_AVAILABLE',
      message:
        '/data/a.csv: cannot be read now: too many open files (ENFILE: the system has no file descriptor free); close some files or connections and retry',
    });
    const enoent = Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    expect(descriptorExhaustion('/data/a.csv', enoent, 'be read')).toBeNull();
    expect(descriptorExhaustion('/data/a.csv', null, 'be read')).toBeNull();
  });
});
