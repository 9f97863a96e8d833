/**
 * SESSION_TRANSITIONS executed whole (src-main/core/session/state-machine.ts): an event is refused
 * outside its `from` states, the discard rule comes from the table's `discards`, a next state the
 * table's `to` does not list is refused, transitions run one at a time, and a model load holds the
 * model lease from its checks on. The states' parts are stand-ins: the machine reads only their kind
 * and the recording's unsaved facts.
 */
import { describe, expect, it } from 'vitest';
import { silentLog } from '../../src-main/core/logging/logger';
import { ModelLease } from '../../src-main/core/session/model-lease';
import type { State } from '../../src-main/core/session/session-states';
import { StateMachine } from '../../src-main/core/session/state-machine';
import { SESSION_TRANSITIONS } from '../../src-main/core/session/transitions';
import { refusalOf } from '../support/refusals';

const model = {} as never;
const unsavedRecording = { unsaved: true, path: null, frameCount: 12, labelledFrameCount: 3 } as never;
const paused: State = { kind: 'paused', model, source: null, recording: unsavedRecording, pipeline: null };

function machine() {
  const lease = new ModelLease();
  const kept: number[] = [];
  const entered: string[] = [];
  const m = new StateMachine(
    silentLog().logger,
    lease,
    async () => void kept.push(kept.length),
    (state) => void entered.push(state.kind),
  );
  return { m, lease, kept, entered };
}

/** A machine in `state`, reached by the table's own events (trace.load leads anywhere to paused). */
async function machineIn(state: State) {
  const made = machine();
  if (state.kind === 'paused') await made.m.run('trace.load', {}, async () => made.m.enter(state, 'trace.load'));
  return made;
}

describe('the transition table, executed', () => {
  it('refuses an event outside its from-states, naming the state, and runs nothing', async () => {
    const { m } = machine();
    let ran = false;
    const refusal = await refusalOf(m.run('stream.stop', {}, async () => void (ran = true)));
    expect(refusal.code).toBe('NOT_AVAILABLE');
    expect(refusal.message).toMatch(/stream\.stop is not possible while the session is no-model/);
    expect(ran).toBe(false);
  });

  it("refuses to enter a state the event's row does not lead to", async () => {
    const { m, entered } = machine();
    const refusal = await refusalOf(m.run('model.load', {}, async () => m.enter(paused, 'model.load')));
    expect(refusal.code).toBe('INTERNAL');
    expect(refusal.message).toBe('model.load may not lead from no-model to paused (SESSION_TRANSITIONS)');
    expect(m.state.kind).toBe('no-model');
    expect(entered).toEqual([]);
  });

  it('a same-state event may only stay in its state', async () => {
    const { m } = await machineIn(paused);
    const ready: State = { kind: 'ready', model, source: null };
    const refusal = await refusalOf(m.run('trace.save', {}, async () => m.enter(ready, 'trace.save')));
    expect(refusal.message).toBe('trace.save may not lead from paused to ready (SESSION_TRANSITIONS)');
    expect(() => m.describe(ready)).toThrow(/a description may not change the state \(paused to ready\)/);
  });

  it("reads the discard rule from the table: discarding events refuse unsaved work unless told, others don't ask", async () => {
    const { m, kept } = await machineIn(paused);
    const keptBefore = kept.length;
    const discarding = SESSION_TRANSITIONS.filter((t) => t.discards === true && t.from.includes('paused'));
    expect(discarding.map((t) => t.event).sort()).toEqual(
      ['model.load', 'offline.start', 'recording.reset', 'source.open', 'trace.load'].sort(),
    );
    for (const { event } of discarding) {
      let ran = false;
      const refusal = await refusalOf(m.run(event, {}, async () => void (ran = true)));
      expect(refusal.code, event).toBe('WOULD_DISCARD');
      expect(refusal.message, event).toMatch(
        /would discard the current recording \(12 frames, 3 labelled, never saved\)/,
      );
      expect(ran, event).toBe(false);
    }
    // before refusing, each tried to keep the recording as a recent run
    expect(kept.length - keptBefore).toBe(discarding.length);
    let ran = false;
    await m.run('source.open', { discard: true }, async () => void (ran = true));
    expect(ran).toBe(true);
    // a non-discarding event neither keeps nor asks
    await m.run('trace.save', {}, async () => undefined);
    expect(kept.length - keptBefore).toBe(discarding.length);
  });

  it('runs transitions one at a time, in the order asked for', async () => {
    const { m } = await machineIn(paused);
    const order: string[] = [];
    let release!: () => void;
    let started!: () => void;
    const firstStarted = new Promise<void>((resolve) => (started = resolve));
    const first = m.run('trace.save', {}, async () => {
      started();
      await new Promise<void>((resolve) => (release = resolve));
      order.push('first');
    });
    const second = m.run('trace.save', {}, async () => void order.push('second'));
    await firstStarted;
    await new Promise((resolve) => setImmediate(resolve));
    // the second waits for the first however long it takes
    expect(order).toEqual([]);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first', 'second']);
  });

  it('a model load holds the lease from its checks to its end: probes are refused meanwhile', async () => {
    const { m, lease } = machine();
    let during: string | null = null;
    await m.run('model.load', { loadsModel: true }, async () => {
      during = (await refusalOf(lease.forProbe('the step probe', async () => undefined))).message;
      m.enter({ kind: 'ready', model, source: null }, 'model.load');
    });
    expect(during).toBe('the step probe runs the model: a model is loading; wait for it');
    await expect(lease.forProbe('the step probe', async () => 'recorded')).resolves.toBe('recorded');
    // and a probe that records refuses a load's checks
    let probing!: () => void;
    const probe = lease.forProbe('the step probe', () => new Promise<void>((resolve) => (probing = resolve)));
    expect(() => lease.refuseWhileProbing('loading a model')).toThrow(
      'the step probe is recording through the model: cancel it or wait before loading a model',
    );
    probing();
    await probe;
    expect(() => lease.refuseWhileProbing('loading a model')).not.toThrow();
  });
});
