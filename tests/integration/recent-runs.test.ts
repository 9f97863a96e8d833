/**
 * Recent runs: the folder (trace files, an index rebuilt from them when damaged, a size limit that
 * removes the oldest runs first) and the session keeping every recording in it, so that nothing
 * recorded is lost when another source is opened, a run can be reopened (with its source position)
 * and two runs compared, and a new session (the app started again) finds them.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiEvent } from '../../src-shared/api/contract';
import { NO_ANNOTATION, type RunAnnotation } from '../../src-shared/api/recent-runs';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { RecentRunsStore } from '../../src-main/core/recent-runs/recent-runs-store';
import { keepRequest } from '../support/recent-run-request';
import { syntheticTrace } from '../support/synthetic-trace';

const backends: KnobBackend[] = [];
afterEach(async () => {
  await Promise.all(backends.splice(0).map((b) => b.close()));
});

const request = keepRequest;

describe('the recent-runs folder', () => {
  it('keeps runs newest first, removes the oldest past the size limit, and reads a run back', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'knob-runs-'));
    const store = await RecentRunsStore.open(folder);
    const first = (await store.keep(request(300, 1)))!;
    // The limit: room for two runs of this size, not three.
    await store.setLimit(Math.floor(first.bytes * 2.5));
    const second = (await store.keep(request(300, 2)))!;
    const third = (await store.keep(request(300, 3)))!;
    const listed = store.describe();
    expect(listed.runs.map((r) => r.id)).toEqual([third.id, second.id]);
    expect(listed.usedBytes).toBe(second.bytes + third.bytes);
    expect(existsSync(join(folder, `${first.id}.arrow`))).toBe(false);
    const { run, file } = await store.read(second.id);
    expect(run.description).toBe('synthetic 2');
    expect(Array.from(file.trace.zDyn)).toEqual(Array.from(syntheticTrace({ frames: 300, seed: 2 }).zDyn));
    // The same run kept again (it grew): one entry, rewritten, now the newest.
    const grown = (await store.keep(request(320, 2, second.id)))!;
    expect(grown.id).toBe(second.id);
    expect(store.describe().runs.map((r) => [r.id, r.frameCount])).toEqual([
      [second.id, 320],
      [third.id, 300],
    ]);
    // A limit of 0 keeps nothing, and a run that does not fit is not kept.
    expect((await store.setLimit(0)).runs).toEqual([]);
    expect(await store.keep(request(10, 4))).toBeNull();
    expect(readdirSync(folder).filter((name) => name.endsWith('.arrow'))).toEqual([]);
  });

  it('a damaged index is rebuilt from the run files; other files in the folder are left alone', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'knob-runs-'));
    const store = await RecentRunsStore.open(folder);
    const a = (await store.keep(request(50, 1)))!;
    const b = (await store.keep(request(60, 2)))!;
    writeFileSync(join(folder, 'index.json'), '{ "formatVersion": 1, "runs": [ {"id": 3 ');
    writeFileSync(join(folder, 'notes.arrow'), 'not a run');
    const reopened = await RecentRunsStore.open(folder);
    expect(reopened.describe().runs.map((r) => r.id)).toEqual([b.id, a.id]);
    expect(existsSync(join(folder, 'notes.arrow'))).toBe(true);
  });
});

describe("the operator's names, tags and notes", () => {
  it('survive a reopened folder, a damaged index and the run kept again; go with the run; a damaged file is kept aside', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'knob-runs-notes-'));
    const store = await RecentRunsStore.open(folder);
    const a = (await store.keep(request(50, 1)))!;
    const b = (await store.keep(request(60, 2)))!;
    expect(a).toMatchObject({ name: '', tags: [], notes: '' });
    const annotation = { name: 'night shift', tags: ['night', 'camera 2'], notes: 'fog from frame 20' };
    expect((await store.annotate(a.id, annotation)).runs.find((r) => r.id === a.id)).toMatchObject(annotation);
    // another process opening the folder, and the index rebuilt from the files: the annotation stays
    writeFileSync(join(folder, 'index.json'), 'damaged');
    expect((await RecentRunsStore.open(folder)).find(a.id)).toMatchObject(annotation);
    // the run kept again (it grew) keeps its annotation
    expect(await store.keep(request(70, 1, a.id))).toMatchObject({ id: a.id, frameCount: 70, ...annotation });
    // refused for a run the folder does not hold
    await expect(store.annotate('run-20250101T000000Z-0123456789ab', annotation)).rejects.toMatchObject({
      code: 'NOT_AVAILABLE',
    });
    // a run removed for the size limit takes its annotation with it
    await store.annotate(b.id, { name: 'b', tags: [], notes: '' });
    await store.setLimit(store.find(a.id)!.bytes);
    expect(store.describe().runs.map((r) => r.id)).toEqual([a.id]);
    const kept = JSON.parse(readFileSync(join(folder, 'annotations.json'), 'utf8')) as { annotations: object };
    expect(Object.keys(kept.annotations)).toEqual([a.id]);
    // an annotations file that cannot be read is moved aside at the next annotation, never overwritten
    writeFileSync(join(folder, 'annotations.json'), '{ "formatVersion": 1, "annotations": { "x');
    const reopened = await RecentRunsStore.open(folder);
    expect(reopened.find(a.id)).toMatchObject({ name: '', tags: [] });
    await reopened.annotate(a.id, annotation);
    const aside = readdirSync(folder).filter((name) => name.startsWith('annotations.damaged-'));
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(folder, aside[0]!), 'utf8')).toContain('"x');
    expect(reopened.find(a.id)).toMatchObject(annotation);
    // one bad entry hides no other: the valid one is listed, the file kept aside at the next change
    const bad = { name: 5, tags: [], notes: '' };
    writeFileSync(
      join(folder, 'annotations.json'),
      JSON.stringify({
        formatVersion: 1,
        annotations: { [a.id]: annotation, 'run-20250101T000000Z-0123456789ab': bad },
      }),
    );
    const partly = await RecentRunsStore.open(folder);
    expect(partly.find(a.id)).toMatchObject(annotation);
    await partly.annotate(a.id, { ...annotation, notes: 'checked again' });
    expect(readdirSync(folder).filter((name) => name.startsWith('annotations.damaged-'))).toHaveLength(2);
    expect((await RecentRunsStore.open(folder)).find(a.id)).toMatchObject({
      name: 'night shift',
      notes: 'checked again',
    });
  });

  it('are checked by the API: a long name, a bad tag, too many tags, a tag twice', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'knob-runs-notes-'));
    const backend = new KnobBackend({ recentRuns: await RecentRunsStore.open(folder) });
    backends.push(backend);
    const id = 'run-20250101T000000Z-0123456789ab';
    const refused: Array<[Partial<RunAnnotation>, RegExp]> = [
      [{ name: 'x'.repeat(121) }, /name/],
      [{ tags: ['a,b'] }, /a tag is 1 to 32/],
      [{ tags: [' padded'] }, /a tag is 1 to 32/],
      [{ tags: Array.from({ length: 17 }, (_, i) => `t${i}`) }, /tags/],
      [{ tags: ['same', 'same'] }, /a tag is given twice/],
      [{ notes: 'n'.repeat(4001) }, /notes/],
    ];
    for (const [change, words] of refused) {
      await expect(
        backend.handle('runs.annotate', { id, ...NO_ANNOTATION, ...change }),
        JSON.stringify(change).slice(0, 40),
      ).rejects.toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(words) });
    }
  });
});

describe('the session keeps every recording', () => {
  async function backendWith(folder: string): Promise<{ backend: KnobBackend; events: ApiEvent[] }> {
    const events: ApiEvent[] = [];
    const backend = new KnobBackend({ recentRuns: await RecentRunsStore.open(folder) });
    backend.subscribe((event) => events.push(event));
    backends.push(backend);
    return { backend, events };
  }

  async function record(backend: KnobBackend, frames: number): Promise<void> {
    await backend.handle('stream.start', { speed: 16 });
    const deadline = performance.now() + 20000;
    while ((backend.session.describe().recording?.frameCount ?? 0) < frames) {
      if (performance.now() > deadline) throw new Error('timed out recording');
      await new Promise((r) => setTimeout(r, 10));
    }
    await backend.handle('stream.stop', {});
  }

  async function listed(backend: KnobBackend, count: number) {
    const deadline = performance.now() + 20000;
    for (;;) {
      const runs = await backend.handle('runs.list', {});
      if (runs.runs.length >= count) return runs;
      if (performance.now() > deadline) throw new Error(`timed out waiting for ${count} kept runs`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('pausing keeps the recording; opening another source loses nothing; runs reopen and compare', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'knob-session-runs-'));
    const { backend, events } = await backendWith(folder);
    await backend.handle('model.load', { path: 'default' });
    await backend.handle('source.open', {
      kind: 'embedded',
      schedule: { kind: 'constant', corruption: 'fog', severity: 2 },
    });
    await record(backend, 60);
    const first = (await listed(backend, 1)).runs[0];
    expect(events).toContain('runs.changed');
    expect(first).toMatchObject({ origin: 'live', source: { kind: 'embedded' } });
    expect(first.schedule).toMatchObject({ kind: 'constant', corruption: 'fog', severity: 2 });
    expect(first.position).toBe(backend.session.describe().playback.position);
    expect(backend.session.describe().recording!.unsaved).toBe(false);
    // A new source without `discard`: nothing to ask, the recording is kept.
    await backend.handle('source.open', { kind: 'embedded' });
    await backend.handle('stream.seek', { frame: 5000 });
    await record(backend, 40);
    const runs = (await listed(backend, 2)).runs;
    expect(runs.map((r) => r.id)).toContain(first.id);
    // Reopened: the recording is the run's, and the source position where that run left off.
    const opened = await backend.handle('runs.open', { id: first.id });
    expect(opened.frameCount).toBe(first.frameCount);
    const state = backend.session.describe();
    expect(state.recording).toMatchObject({ origin: 'loaded', frameCount: first.frameCount, unsaved: false });
    expect(state.playback.position).toBe(first.position);
    // Its gate over time at the current knobs, for the charts: every frame when it fits, else
    // min/max per time column (the extremes of g kept).
    const series = await backend.handle('recording.series', { maxPoints: 100 });
    expect(series.recordingId).toBe(state.recording!.id);
    expect(series.tSeconds.length).toBeLessThanOrEqual(100);
    const full = await backend.handle('recording.series', { maxPoints: 100_000 });
    expect(full.tSeconds).toHaveLength(first.frameCount);
    expect(Math.max(...series.g)).toBe(Math.max(...full.g));
    expect(Math.min(...series.g)).toBe(Math.min(...full.g));
    // Two runs side by side, with B - A from resampling each on its own.
    const comparison = await backend.handle('runs.compare', { ids: [runs[1].id, runs[0].id] });
    expect(comparison.runs.map((side) => side.run.id)).toEqual([runs[1].id, runs[0].id]);
    expect(comparison.runs[0]!.figures.map((f) => f.name)).toEqual(['accuracy', 'NLL', 'Brier', 'ECE']);
    expect(comparison.differences).toHaveLength(1);
    expect(comparison.differences[0]!.run).toBe(runs[0].id);
    expect(comparison.differences[0]!.differences).toHaveLength(4);
    for (const d of comparison.differences[0]!.differences) {
      // two runs: one comparison with the reference, so the plain 95 % interval
      expect(d.method).toMatch(/independent \(two recordings\)/);
      expect(d.method).toMatch(/95 %/);
    }
  });

  it('a new session on the same folder finds the runs; without a folder nothing is kept', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'knob-session-runs-'));
    const { backend } = await backendWith(folder);
    await backend.handle('model.load', { path: 'default' });
    await backend.handle('source.open', { kind: 'embedded' });
    await record(backend, 30);
    const kept = (await listed(backend, 1)).runs[0];
    await backend.close();
    const { backend: again } = await backendWith(folder);
    expect((await again.handle('runs.list', {})).runs.map((r) => r.id)).toEqual([kept.id]);
    const plain = new KnobBackend();
    backends.push(plain);
    expect(await plain.handle('runs.list', {})).toMatchObject({ enabled: false, runs: [] });
    await expect(plain.handle('runs.setLimit', { limitBytes: 10 })).rejects.toThrow(/keeps no recent runs/);
  });
});
