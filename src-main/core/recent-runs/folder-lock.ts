import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { KnobError } from '../../../src-shared/errors';

/**
 * An exclusive lock on a folder that works across processes (two hosts, or the desktop app and a
 * browser-mode host, on one data folder): a lock file created with O_EXCL ('wx'), which exactly one
 * creator wins, holding its owner (pid, host, a random nonce, when). A lock whose owner is gone is
 * taken over: its process no longer exists on this host, or it is older than `staleMs` (a holder
 * that hung; holders keep it for one index update, milliseconds to a few seconds). Waiting is
 * bounded: after `waitMs` the caller gets NOT_AVAILABLE to retry.
 *
 * Taking over renames the stale file aside first and checks it is the one judged stale. A lock
 * moved aside by mistake in that instant (a second process judged the same stale lock) is not put
 * back: its holder may have released it meanwhile, and putting it back would leave a lock nobody
 * releases. A holder keeps its lock fresh (a heartbeat rewrites its time every staleMs / 3 while
 * the lock is still its own), so a long hold (a large trace on a slow disk) is never judged stale
 * while its process lives and runs.
 */
export const LOCK_FILE = 'index.lock';
export const DEFAULT_LOCK_STALE_MS = 60_000;
export const DEFAULT_LOCK_WAIT_MS = 30_000;
/** Retries start this far apart and back off to MAX_RETRY_DELAY_MS (with jitter, so waiters spread). */
const FIRST_RETRY_DELAY_MS = 2;
const MAX_RETRY_DELAY_MS = 50;

export interface FolderLockOptions {
  staleMs?: number;
  waitMs?: number;
}

interface LockOwner {
  pid: number;
  host: string;
  nonce: string;
  createdAtMs: number;
}

function parseOwner(text: string): LockOwner | null {
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    return typeof value.pid === 'number' && typeof value.nonce === 'string' && typeof value.createdAtMs === 'number'
      ? (value as LockOwner)
      : null;
  } catch {
    return null;
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's process
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The lock file's text, or null when there is none (any more). */
async function readLock(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

async function isStale(path: string, text: string, staleMs: number): Promise<boolean> {
  const owner = parseOwner(text);
  if (owner === null) {
    // Created but not written yet, or damaged: judged by the file's age alone.
    try {
      return Date.now() - (await stat(path)).mtimeMs > staleMs;
    } catch {
      return false;
    }
  }
  if (owner.host === hostname() && owner.pid !== process.pid && !processExists(owner.pid)) return true;
  return Date.now() - owner.createdAtMs > staleMs;
}

/** Removes a stale lock. */
async function breakStaleLock(path: string): Promise<void> {
  const aside = `${path}.stale-${randomBytes(6).toString('hex')}`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  await rm(aside, { force: true });
}

/** Runs `work` holding the folder's lock; the lock is released however `work` ends. */
export async function withFolderLock<T>(
  folder: string,
  work: () => Promise<T>,
  options: FolderLockOptions = {},
): Promise<T> {
  const path = join(folder, LOCK_FILE);
  const staleMs = options.staleMs ?? DEFAULT_LOCK_STALE_MS;
  const waitMs = options.waitMs ?? DEFAULT_LOCK_WAIT_MS;
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    nonce: randomBytes(12).toString('hex'),
    createdAtMs: 0,
  };
  const startedMs = Date.now();
  let delayMs = FIRST_RETRY_DELAY_MS;
  let text = '';
  for (;;) {
    owner.createdAtMs = Date.now();
    text = JSON.stringify(owner);
    try {
      const handle = await open(path, 'wx');
      try {
        await handle.writeFile(text);
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const held = await readLock(path);
    if (Date.now() - startedMs > waitMs) {
      const holder = held === null ? null : parseOwner(held);
      throw new KnobError(
        'NOT_AVAILABLE',
        `${folder}: another process${holder === null ? '' : ` (pid ${holder.pid})`} has held its lock for over ${waitMs / 1000} s; retry`,
      );
    }
    // released in between: try again at once
    if (held === null) continue;
    if (await isStale(path, held, staleMs)) {
      await breakStaleLock(path);
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, delayMs * (0.5 + Math.random())));
    delayMs = Math.min(MAX_RETRY_DELAY_MS, delayMs * 2);
  }
  // one beat at a time, and none after the release (a late write would recreate the lock)
  let beat: Promise<void> = Promise.resolve();
  const heartbeat = setInterval(() => {
    beat = beat
      .then(async () => {
        if ((await readLock(path)) !== text) return;
        owner.createdAtMs = Date.now();
        const next = JSON.stringify(owner);
        await writeFile(path, next);
        text = next;
      })
      .catch(() => undefined);
  }, staleMs / 3);
  heartbeat.unref();
  try {
    return await work();
  } finally {
    clearInterval(heartbeat);
    await beat;
    // Only our own lock: had we been judged stale and replaced, the file is the new holder's.
    if ((await readLock(path).catch(() => null)) === text) await rm(path, { force: true });
  }
}
