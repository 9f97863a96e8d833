/** Recent runs (src-renderer/lib/desk/runs.svelte.ts): listed, kept current, compared, limited, reopened. */
import { describe, expect, it } from 'vitest';
import { NO_RUNS, startedDesk } from './desk-harness';
import { recentRun, recording, RUN_A, RUN_B, sessionState, streamUpdate } from './fixtures';

describe('recent runs', () => {
  it('are listed at start-up and follow the backend', async () => {
    const listed = { ...NO_RUNS, runs: [recentRun(RUN_A)] };
    const { desk, api } = await startedDesk({ runs: listed });
    expect(desk.runs.runs?.runs.map((r) => r.id)).toEqual([RUN_A]);
    api.emit('runs.changed', { ...listed, runs: [recentRun(RUN_B), recentRun(RUN_A)], usedBytes: 2000 });
    expect(desk.runs.runs?.runs.map((r) => r.id)).toEqual([RUN_B, RUN_A]);
  });

  it('takes the new size limit as the backend answers it', async () => {
    const { desk, api } = await startedDesk();
    api.handle('runs.setLimit', ({ limitBytes }) => ({ ...NO_RUNS, limitBytes }));
    await desk.runs.setLimit(5 * 2 ** 20);
    expect(desk.runs.runs?.limitBytes).toBe(5 * 2 ** 20);
  });

  it('compares the runs chosen, the first as the reference, and says why when it cannot', async () => {
    const { desk, api } = await startedDesk();
    api.handle('runs.compare', ({ ids }) => ({
      runs: ids.map((id) => ({ run: recentRun(id), figures: [], reliability: null })),
      differences: ids.slice(1).map((run) => ({ run, differences: [] })),
      computeMs: 3,
    }));
    desk.runs.toggle(RUN_B);
    desk.runs.toggle(RUN_A);
    await desk.runs.compare();
    expect(api.callsOf('runs.compare')).toEqual([{ ids: [RUN_B, RUN_A] }]);
    expect(desk.runs.comparison?.runs[0]!.run.id).toBe(RUN_B);
    api.handle('runs.compare', () => {
      throw new Error('the run was dropped for the size limit');
    });
    await desk.runs.compare();
    expect(desk.errors.runs).toBe('the run was dropped for the size limit');
    expect(api.violations).toEqual([]);
  });

  it('chooses at most eight runs, and forgets a chosen run the folder no longer holds', async () => {
    const ids = Array.from({ length: 9 }, (_, i) => `run-20250101T00000${i}Z-00000000000${i}`);
    const listed = { ...NO_RUNS, runs: ids.map((id) => recentRun(id)) };
    const { desk, api } = await startedDesk({ runs: listed });
    for (const id of ids) desk.runs.toggle(id);
    expect(desk.runs.chosen).toEqual(ids.slice(0, 8));
    desk.runs.toggle(ids[0]!);
    expect(desk.runs.chosen[0]).toBe(ids[1]);
    api.emit('runs.changed', { ...listed, runs: listed.runs.slice(2) });
    expect(desk.runs.chosen).toEqual(ids.slice(2, 8));
  });

  it('names, tags and annotates a run; a bad tag is named before any call', async () => {
    const listed = { ...NO_RUNS, runs: [recentRun(RUN_A)] };
    const { desk, api } = await startedDesk({ runs: listed });
    api.handle('runs.annotate', ({ id, ...annotation }) => ({
      ...listed,
      runs: [recentRun(id, annotation)],
    }));
    expect(await desk.runs.annotate(RUN_A, { name: 'night shift', tags: ['night', 'camera 2'], notes: 'fog' })).toBe(
      true,
    );
    expect(desk.runs.runs?.runs[0]).toMatchObject({ name: 'night shift', tags: ['night', 'camera 2'], notes: 'fog' });
    expect(await desk.runs.annotate(RUN_A, { name: '', tags: ['a,b'], notes: '' })).toBe(false);
    expect(await desk.runs.annotate(RUN_A, { name: '', tags: ['x', 'x'], notes: '' })).toBe(false);
    expect(desk.errors.runs).toMatch(/tags: a tag is given twice/);
    expect(api.callsOf('runs.annotate')).toHaveLength(1);
    expect(api.violations).toEqual([]);
  });

  it('reopens a run as the current recording, clearing the views of the one before', async () => {
    const { desk, api } = await startedDesk();
    api.emit('stream.update', streamUpdate(1, 4));
    const reopened = recording(5, { origin: 'loaded', frameCount: 0 });
    api.handle('runs.open', () => ({ path: `/runs/${RUN_A}.knobtrace`, frameCount: 0, classCount: 10 }));
    api.handle('session.get', () => sessionState({ recording: reopened }));
    api.handle('recording.series', () => ({
      recordingId: 5,
      settingsVersion: 0,
      frameCount: 0,
      tSeconds: [],
      g: [],
      uRef: [],
      severity: [],
      rollingAccuracy: [],
      rollingConfidence: [],
      rollingWindowFrames: 300,
    }));
    await desk.runs.open(RUN_A);
    expect(api.callsOf('runs.open')).toEqual([{ id: RUN_A, discard: false }]);
    expect(desk.mirror.recordingId).toBe(5);
    expect(desk.stream.update).toBeNull();
    expect(api.violations).toEqual([]);
  });
});
