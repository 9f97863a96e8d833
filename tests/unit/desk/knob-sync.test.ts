/** Knob sync (src-renderer/lib/desk/knob-sync.svelte.ts) against the contract-checked fake backend. */
import { describe, expect, it } from 'vitest';
import { KnobError } from '../../../src-shared/errors';
import { settle } from './contract-fake-api';
import { startedDesk } from './desk-harness';
import { knobs } from './fixtures';

describe('knob sync', () => {
  it('shows a turn at once and saves it; turns made while one is on its way follow it as one merged call', async () => {
    const { desk, api, store } = await startedDesk();
    api.hold('knobs.set');
    void desk.knobs.change({ zeta: 0.9 });
    expect(desk.knobs.gate.zeta).toBe(0.9);
    expect(store.saved?.zeta).toBe(0.9);
    void desk.knobs.change({ wnRadPerSec: 8 });
    void desk.knobs.change({ zeta: 1.1 });
    await settle();
    expect(api.callsOf('knobs.set')).toEqual([{ gate: { zeta: 0.9 } }]);
    api.waiting('knobs.set')[0].answer(knobs(1, { zeta: 0.9 }));
    await settle();
    expect(api.callsOf('knobs.set')).toEqual([{ gate: { zeta: 0.9 } }, { gate: { wnRadPerSec: 8, zeta: 1.1 } }]);
    // the knobs still show the operator's latest turn, not the first call's answer
    expect(desk.knobs.gate).toMatchObject({ zeta: 1.1, wnRadPerSec: 8 });
    api.waiting('knobs.set')[1].answer(knobs(2, { zeta: 1.1, wnRadPerSec: 8 }));
    await settle();
    expect(desk.knobs.version).toBe(2);
    expect(api.violations).toEqual([]);
  });

  it("takes the backend's knobs when no turn is on its way, never an older version than it holds", async () => {
    const { desk, api } = await startedDesk();
    api.emit('knobs.changed', knobs(3, { zeta: 2 }));
    expect(desk.knobs.version).toBe(3);
    expect(desk.knobs.gate.zeta).toBe(2);
    api.emit('knobs.changed', knobs(2, { zeta: 0.3 }));
    expect(desk.knobs.version).toBe(3);
    expect(desk.knobs.gate.zeta).toBe(2);
  });

  it("keeps the operator's turn on screen while it is on its way, whatever the backend says meanwhile", async () => {
    const { desk, api } = await startedDesk();
    api.hold('knobs.set');
    void desk.knobs.change({ zeta: 0.9 });
    await settle();
    api.emit('knobs.changed', knobs(1, { zeta: 0.4 }));
    expect(desk.knobs.gate.zeta).toBe(0.9);
    expect(desk.knobs.version).toBe(1);
  });

  it("shows a refused turn's error and puts the knobs back to what the backend holds", async () => {
    const { desk, api } = await startedDesk();
    api.handle('knobs.set', () => {
      throw new KnobError('INVALID_SETTINGS', 'zeta: too small for this variant');
    });
    api.handle('knobs.get', () => knobs(4, { zeta: 0.7 }));
    await desk.knobs.change({ zeta: 0.9 });
    await settle();
    expect(desk.errors.knobs).toBe('zeta: too small for this variant');
    expect(desk.knobs.gate.zeta).toBe(0.7);
    expect(desk.knobs.version).toBe(4);
  });

  it('replays the charts and the frame on screen at new knobs while paused, not while playing', async () => {
    const { desk, api } = await startedDesk();
    api.hold('recording.series');
    api.emit('knobs.changed', knobs(1));
    await settle();
    expect(api.callsOf('recording.series')).toHaveLength(1);
    api.emit('session.state', { ...desk.session!, state: 'playing' });
    api.emit('knobs.changed', knobs(2));
    await settle();
    expect(api.callsOf('recording.series')).toHaveLength(1);
  });

  it('sends a fresh backend the knobs a previous desk saved', async () => {
    const { desk, api, store } = await startedDesk();
    store.saved = { ...desk.knobs.gate, zeta: 1.5 };
    api.handle('knobs.set', ({ gate }) => knobs(1, gate));
    expect(desk.knobs.restoreSaved()).toBe(true);
    await settle();
    expect(api.callsOf('knobs.set')[0].gate.zeta).toBe(1.5);
    expect(desk.knobs.gate.zeta).toBe(1.5);
  });
});
