/**
 * One recent-runs folder shared by several processes (two browser-mode hosts, or the desktop app
 * and a host): real child processes keep runs into it at the same time; afterwards every run is
 * listed, under an id no other run has, and every one can be evicted. The folder's lock
 * (folder-lock.ts) is taken over from a process that died holding it, and a lock held by a live
 * process makes a change wait, then give up with a retryable error (bounded).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RECENT_RUN_ID } from '../../src-shared/api/recent-runs';
import { LOCK_FILE } from '../../src-main/core/recent-runs/folder-lock';
import { RecentRunsStore } from '../../src-main/core/recent-runs/recent-runs-store';
import { keepRequest } from '../support/recent-run-request';

const RUNS_PER_PROCESS = 30;

interface Writer {
  /** Resolves once it has the folder open. */
  ready: Promise<void>;
  go(): void;
  /** The ids it was given. */
  ids: Promise<string[]>;
}

/** A writer process (tests/support/recent-runs-writer.ts), started and waiting for go(). */
function writer(folder: string, seed: number): Writer {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'tests/support/recent-runs-writer.ts', folder, String(RUNS_PER_PROCESS), String(seed)],
    { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], timeout: 120_000 },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<string[]>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(stdout) as string[]) : reject(new Error(`writer exited ${code}: ${stderr}`)),
    );
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    exited.catch(reject);
  });
  return { ready, go: () => child.send('go'), ids: exited };
}

/** Writers started together: each opens the folder, then all keep their runs at once. */
async function writeTogether(folder: string, seeds: number[]): Promise<string[][]> {
  const writers = seeds.map((seed) => writer(folder, seed));
  await Promise.all(writers.map((w) => w.ready));
  for (const w of writers) w.go();
  return Promise.all(writers.map((w) => w.ids));
}

const arrowFiles = (folder: string): string[] => readdirSync(folder).filter((name) => name.endsWith('.arrow'));

describe('a recent-runs folder shared by processes', () => {
  it('two processes keeping runs at once: every run listed, no id twice, every run evictable', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'knob-shared-runs-'));
    const [a, b] = await writeTogether(folder, [1000, 2000]);
    const written = [...a!, ...b!];
    expect(new Set(written).size).toBe(2 * RUNS_PER_PROCESS);
    for (const id of written) expect(id).toMatch(RECENT_RUN_ID);

    const store = await RecentRunsStore.open(folder);
    const listed = store.describe().runs;
    expect(listed.map((run) => run.id).sort()).toEqual([...written].sort());
    expect(arrowFiles(folder).sort()).toEqual(written.map((id) => `${id}.arrow`).sort());
    // each first run was kept again by its process: its entry is the grown one
    for (const id of [a![0], b![0]]) expect(store.find(id)!.frameCount).toBe(24);
    for (const run of listed.filter((run) => run.id !== a![0] && run.id !== b![0])) expect(run.frameCount).toBe(20);

    expect((await store.setLimit(0)).runs).toEqual([]);
    expect(arrowFiles(folder)).toEqual([]);
    expect((await RecentRunsStore.open(folder)).describe().runs).toEqual([]);
    expect(existsSync(join(folder, LOCK_FILE))).toBe(false);
  });

  it("another process's runs are found by this one's refresh and read", async () => {
    const folder = mkdtempSync(join(tmpdir(), 'knob-shared-runs-'));
    const store = await RecentRunsStore.open(folder);
    const mine = (await store.keep(keepRequest(20, 1)))!;
    const [theirs] = await writeTogether(folder, [3000]);
    const run = await store.read(theirs![1]!);
    expect(run.run.id).toBe(theirs![1]);
    expect(store.describe().runs.map((r) => r.id)).toContain(mine.id);
    expect((await store.refresh()).runs).toHaveLength(RUNS_PER_PROCESS + 1);
  });

  it('takes over a lock left by a process that died holding it', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'knob-shared-runs-'));
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const pid = Number(dead.stdout);
    writeFileSync(
      join(folder, LOCK_FILE),
      JSON.stringify({ pid, host: hostname(), nonce: 'dead', createdAtMs: Date.now() }),
    );
    const store = await RecentRunsStore.open(folder, { lock: { waitMs: 30_000 } });
    expect(await store.keep(keepRequest(20, 1))).not.toBeNull();
    expect(existsSync(join(folder, LOCK_FILE))).toBe(false);
  });

  it('waits for a live holder, then refuses with a retryable error; kept runs are untouched', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'knob-shared-runs-'));
    const store = await RecentRunsStore.open(folder, { lock: { waitMs: 300 } });
    const kept = (await store.keep(keepRequest(20, 1)))!;
    // held by a live process (this one, as another store would hold it), fresh
    writeFileSync(
      join(folder, LOCK_FILE),
      JSON.stringify({ pid: process.pid, host: hostname(), nonce: 'live', createdAtMs: Date.now() }),
    );
    await expect(store.keep(keepRequest(20, 2))).rejects.toMatchObject({
      code: 'NOT_AVAILABLE',
      message: expect.stringMatching(/another process \(pid \d+\) has held its lock .*; retry$/),
    });
    expect(store.describe().runs.map((run) => run.id)).toEqual([kept.id]);
    expect(arrowFiles(folder)).toEqual([`${kept.id}.arrow`]);
  });
});
