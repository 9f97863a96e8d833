/**
 * Views computed from the recording (metrics-view, ab-compare, recording-request): kept only for the
 * recording they describe, stale by the one rule when the knobs, frames or labels move on.
 */
import { describe, expect, it } from 'vitest';
import { settle } from './contract-fake-api';
import { startedDesk } from './desk-harness';
import { knobs, metricsSnapshot, recording, sessionState } from './fixtures';

describe('the calibration figures', () => {
  it('say they are stale when the knobs, the recorded frames or the labels move on', async () => {
    const { desk, api } = await startedDesk();
    api.handle('metrics.snapshot', () => metricsSnapshot(1, { frameCount: 10 }));
    await desk.metrics.refresh();
    expect(desk.metrics.stale).toBeNull();
    api.emit('knobs.changed', knobs(1));
    expect(desk.metrics.stale).toBe('computed at settings v0, the knobs are at v1');
    api.handle('metrics.snapshot', () => metricsSnapshot(1, { frameCount: 10, settingsVersion: 1 }));
    await desk.metrics.refresh();
    expect(desk.metrics.stale).toBeNull();
    api.emit('session.state', sessionState({ recording: recording(1, { frameCount: 12 }) }));
    expect(desk.metrics.stale).toBe('computed on 10 frames, 12 are recorded');
    // over the last N frames, the count of recorded frames does not make them stale
    desk.metrics.window = 5;
    expect(desk.metrics.stale).toBeNull();
    desk.metrics.labelsRevision++;
    expect(desk.metrics.stale).toBe('labels changed since');
  });

  it('never show figures that arrive for a recording no longer current', async () => {
    const { desk, api } = await startedDesk();
    api.hold('metrics.snapshot');
    const refreshed = desk.metrics.refresh();
    await settle();
    api.emit('session.state', sessionState({ recording: recording(2) }));
    api.waiting('metrics.snapshot')[0].answer(metricsSnapshot(1, { frameCount: 10 }));
    await refreshed;
    expect(desk.metrics.snapshot).toBeNull();
  });

  it("compute once at a time; 'full' asked for meanwhile wins over 'light'", async () => {
    const { desk, api } = await startedDesk();
    api.hold('metrics.snapshot');
    void desk.metrics.refresh('light');
    void desk.metrics.refresh('full');
    void desk.metrics.refresh('light');
    await settle();
    expect(desk.metrics.busy).toBe(true);
    api.waiting('metrics.snapshot')[0].answer(metricsSnapshot(1, { frameCount: 10 }));
    await settle();
    expect(api.callsOf('metrics.snapshot').map((p) => p.detail)).toEqual(['light', 'full']);
    api.waiting('metrics.snapshot')[1].answer(metricsSnapshot(1, { frameCount: 10 }));
    await settle();
    expect(desk.metrics.busy).toBe(false);
  });

  it('stop intervals still resampled for knobs that moved on, so the new figures come first', async () => {
    const { desk, api } = await startedDesk();
    api.hold('metrics.snapshot');
    // paused at v0: figures, then their intervals, which are still resampling
    const first = desk.refreshStale();
    await settle();
    api.waiting('metrics.snapshot')[0].answer(metricsSnapshot(1, { frameCount: 10 }));
    await settle();
    expect(api.callsOf('metrics.snapshot').map((p) => p.detail)).toEqual(['light', 'full']);
    // intervals for the knobs as they are stay: nothing has moved
    expect(desk.metrics.interruptIntervals()).toBe(false);
    api.emit('knobs.changed', knobs(1));
    const second = desk.refreshStale();
    await settle();
    // the v0 intervals were cancelled (no error shown) and v1's figures asked for at once
    expect(desk.errors.metrics).toBeNull();
    expect(api.callsOf('metrics.snapshot').map((p) => p.detail)).toEqual(['light', 'full', 'light']);
    api.waiting('metrics.snapshot')[2].answer(metricsSnapshot(1, { frameCount: 10, settingsVersion: 1 }));
    await settle();
    expect(desk.metrics.stale).toBeNull();
    expect(api.callsOf('metrics.snapshot').map((p) => p.detail)).toEqual(['light', 'full', 'light', 'full']);
    api.waiting('metrics.snapshot')[3].answer(metricsSnapshot(1, { frameCount: 10, settingsVersion: 1 }));
    await Promise.all([first, second]);
    expect(desk.metrics.busy).toBe(false);
    expect(desk.errors.metrics).toBeNull();
  });

  it('are recomputed while paused when stale, and not while playing', async () => {
    const { desk, api } = await startedDesk();
    api.handle('metrics.snapshot', () => metricsSnapshot(1, { frameCount: 10 }));
    expect(desk.wantsRecompute).toBe(true);
    await desk.refreshStale();
    expect(desk.wantsRecompute).toBe(false);
    api.emit('session.state', sessionState({ state: 'playing', recording: recording(1, { frameCount: 11 }) }));
    expect(desk.metrics.stale).not.toBeNull();
    expect(desk.wantsRecompute).toBe(false);
  });

  it('complete light figures computed as the stream was paused with their intervals, once', async () => {
    // the playback refresh (light) that ran across the pause covers every frame: not stale, but
    // without intervals or TCE; paused, the desk asks for those by itself (the CI glossary race)
    const { desk, api } = await startedDesk();
    api.handle('metrics.snapshot', () => metricsSnapshot(1, { frameCount: 10 }));
    await desk.metrics.refresh('light');
    expect(desk.metrics.stale).toBeNull();
    expect(desk.metrics.lacksResampling).toBe(true);
    expect(desk.wantsRecompute).toBe(true);
    await desk.refreshStale();
    expect(api.callsOf('metrics.snapshot').map((p) => p.detail)).toEqual(['light', 'full']);
    expect(desk.metrics.lacksResampling).toBe(false);
    expect(desk.wantsRecompute).toBe(false);
    // a failed full computation is shown, not retried by itself
    await desk.metrics.refresh('light');
    api.handle('metrics.snapshot', () => {
      throw { code: 'INTERNAL', message: 'resampling failed' };
    });
    await desk.refreshStale();
    expect(desk.errors.metrics).not.toBeNull();
    expect(desk.wantsRecompute).toBe(false);
  });
});

describe('A/B', () => {
  it('refuses to compare before both slots are set, and goes stale when a slot changes', async () => {
    const { desk, api } = await startedDesk();
    await desk.ab.compare();
    expect(desk.errors.compare).toBe('set both A and B from the knobs first');
    desk.ab.take('a');
    desk.knobs.gate.zeta = 1.3;
    desk.ab.take('b');
    api.handle('metrics.compare', () => ({
      a: metricsSnapshot(1, { frameCount: 10 }),
      b: metricsSnapshot(1, { frameCount: 10 }),
      differences: [],
      computeMs: 2,
    }));
    await desk.ab.compare();
    expect(api.callsOf('metrics.compare')[0].b.zeta).toBe(1.3);
    expect(desk.ab.stale).toBeNull();
    desk.ab.take('a');
    expect(desk.ab.stale).toBe('A or B changed since');
  });

  it('says it is comparing while the replays run, and binned otherwise when the binning moves on', async () => {
    const { desk, api } = await startedDesk();
    desk.ab.take('a');
    desk.ab.take('b');
    api.hold('metrics.compare');
    const comparing = desk.ab.compare();
    await settle();
    expect(desk.ab.busy).toBe(true);
    api.waiting('metrics.compare')[0]!.answer({
      a: metricsSnapshot(1, { frameCount: 10 }),
      b: metricsSnapshot(1, { frameCount: 10 }),
      differences: [],
      computeMs: 2,
    });
    await comparing;
    expect(desk.ab.busy).toBe(false);
    expect(desk.ab.stale).toBeNull();
    desk.metrics.binning = { scheme: 'equal-mass', bins: 20, norm: 'max' };
    expect(desk.ab.stale).toBe('binned with 15 equal-width bins, L1 norm, 20 equal-mass bins, max norm is asked for');
  });
});

describe('analyses', () => {
  it('are kept for the recording they describe and say when they are of other labels or earlier knobs', async () => {
    const { desk, api } = await startedDesk();
    api.handle('analysis.run', () => ({
      recordingId: 1,
      settingsVersion: 0,
      frames: 10,
      labelledFrames: 10,
      lines: ['T_eff >= 1 on every frame'],
      bySeverity: null,
      exceptions: { columns: [], rows: [] },
      exceptionCount: 0,
      wallMs: 1,
    }));
    await desk.runAnalyses();
    expect(desk.analyses.result?.lines).toEqual(['T_eff >= 1 on every frame']);
    expect(desk.analyses.stale).toBeNull();
    // the labels the analyses read changed: stale, as the knobs moving on make them
    desk.metrics.labelsRevision++;
    expect(desk.analyses.stale).toBe('labels changed since');
    api.emit('knobs.changed', knobs(1));
    expect(desk.analyses.stale).toBe('computed at settings v0, the knobs are at v1');
    api.emit('session.state', sessionState({ recording: recording(2) }));
    expect(desk.analyses.result).toBeNull();
  });
});
