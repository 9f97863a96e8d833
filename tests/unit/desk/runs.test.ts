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

  it('compares two runs, and says why when it cannot', async () => {
    const { desk, api } = await startedDesk();
    api.handle('runs.compare', ({ a, b }) => ({
      a: { run: recentRun(a), figures: [], reliability: null },
      b: { run: recentRun(b), figures: [], reliability: null },
      differences: [],
      computeMs: 3,
    }));
    await desk.runs.compare(RUN_A, RUN_B);
    expect(desk.runs.comparison?.b.run.id).toBe(RUN_B);
    api.handle('runs.compare', () => {
      throw new Error('the run was dropped for the size limit');
    });
    await desk.runs.compare(RUN_A, RUN_B);
    expect(desk.errors.runs).toBe('the run was dropped for the size limit');
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
