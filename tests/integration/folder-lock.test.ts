/**
 * The recent-runs folder lock (src-main/core/recent-runs/folder-lock.ts): a holder that keeps the
 * lock longer than the stale age, while it lives and runs, is never taken over (its heartbeat keeps
 * the lock fresh), and the lock is gone once it is released.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCK_FILE, withFolderLock } from '../../src-main/core/recent-runs/folder-lock';

describe('the folder lock', () => {
  it('a live holder past the stale age keeps the lock; the next one gets it after the release', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'knob-folder-lock-'));
    const events: string[] = [];
    const options = { staleMs: 900, waitMs: 20_000 };
    const first = withFolderLock(
      folder,
      async () => {
        events.push('first holds');
        await new Promise((resolve) => setTimeout(resolve, 3000)); // over three stale ages
        events.push('first releases');
      },
      options,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = withFolderLock(folder, async () => void events.push('second holds'), options);
    await Promise.all([first, second]);
    expect(events).toEqual(['first holds', 'first releases', 'second holds']);
    expect(existsSync(join(folder, LOCK_FILE))).toBe(false);
  });
});
