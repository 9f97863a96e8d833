/**
 * The session's state machine, driven through the API with the shipped model and real sources:
 *  - table-driven: every event of SESSION_TRANSITIONS in every state; accepted where the table says
 *    (and landing in a state it lists), refused with NOT_AVAILABLE everywhere else, with nothing
 *    changed by a refusal;
 *  - the cases that used to go wrong: trace.load after a recording, a label given through the API
 *    reaching the rolling figures and the metrics at once, a seek while paused, and discarding
 *    transitions refused without `discard: true`;
 *  - the docs' state diagram is the one the table draws.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiEvent, ApiEventData, ApiMethod, ApiParams } from '../../src-shared/api/contract';
import { encodeFramePacket } from '../../src-shared/api/frame-packet';
import { SESSION_STATES, type SessionState, type SessionStateKind } from '../../src-shared/api/session-state';
import { KnobError } from '../../src-shared/errors';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { writeIdxFile } from '../../src-main/core/datasets/idx-file';
import { SESSION_TRANSITIONS, sessionStateDiagram, type SessionEvent } from '../../src-main/core/session/transitions';
import { fashionMnistSample } from '../support/fashion-mnist';

const dir = mkdtempSync(join(tmpdir(), 'knob-session-'));
const sample = fashionMnistSample(40);
const SHORT_DATASET = join(dir, 'short-images-idx3-ubyte');
const SAVED_TRACE = join(dir, 'saved.arrow');

let backend: KnobBackend;
const events: Array<{ event: ApiEvent; data: unknown }> = [];

beforeAll(async () => {
  const images = new Uint8Array(20 * 784);
  for (let i = 0; i < 20; i++) images.set(sample.images[i], i * 784);
  await writeIdxFile(SHORT_DATASET, { dimensions: [20, 28, 28], data: images });
  await writeIdxFile(join(dir, 'short-labels-idx1-ubyte'), {
    dimensions: [20],
    data: Uint8Array.from(sample.labels.slice(0, 20)),
  });
  backend = new KnobBackend();
  backend.subscribe((event, data) => events.push({ event, data }));
  await backend.handle('model.load', { path: 'default' });
  // A trace on disk for trace.load.
  await reach('paused');
  await backend.handle('trace.save', { path: SAVED_TRACE });
});
afterAll(async () => backend?.close());

const state = (): SessionState => backend.session.describe();

async function until(predicate: () => boolean, what: string, timeoutMs = 20000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what} (state ${state().state})`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

let offlineRun: { controller: AbortController; done: Promise<unknown> } | null = null;

async function finishOfflineRun(): Promise<void> {
  if (offlineRun === null) return;
  offlineRun.controller.abort();
  await offlineRun.done.catch(() => undefined);
  offlineRun = null;
  await until(() => state().state !== 'offline-run', 'the offline run to end');
}

function cameraPacket(i: number, label = -1): Uint8Array {
  return encodeFramePacket({
    width: 28,
    height: 28,
    channels: 1,
    timestampSeconds: 1000 + i / 30,
    label,
    pixels: sample.images[i % 40],
  });
}

/** Brings the shared backend into `target` from wherever it is (discarding what is recorded). */
async function reach(target: Exclude<SessionStateKind, 'no-model'>): Promise<void> {
  await finishOfflineRun();
  if (state().state === 'playing' || state().state === 'camera') await backend.handle('stream.stop', {});
  switch (target) {
    case 'ready':
      await backend.handle('source.open', { kind: 'embedded', discard: true });
      break;
    case 'playing':
      await reach('ready');
      await backend.handle('stream.start', { speed: 16 });
      break;
    case 'camera':
      await backend.handle('source.open', { kind: 'camera', discard: true });
      await backend.handle('stream.start', {});
      break;
    case 'paused':
      await reach('playing');
      await until(() => (state().recording?.frameCount ?? 0) >= 3, 'three recorded frames');
      await backend.handle('stream.stop', {});
      break;
    case 'offline-run': {
      await reach('ready');
      const controller = new AbortController();
      const done = backend.call(
        'stream.runOffline',
        { discard: true },
        { signal: controller.signal, progress: () => undefined },
      );
      done.catch(() => undefined);
      offlineRun = { controller, done };
      await until(() => state().state === 'offline-run', 'the offline run to start');
      break;
    }
  }
  expect(state().state).toBe(target);
}

/** Fires one event of the table; internal events are driven by what causes them. */
async function fire(target: KnobBackend, event: SessionEvent): Promise<void> {
  const call = <M extends ApiMethod>(method: M, params: ApiParams<M>) => target.handle(method, params);
  const current = target.session.describe();
  if ((event === 'recording.label' || event === 'trace.save') && current.recording?.frameCount === 0) {
    // Something to label or save: a frame of the running stream.
    if (current.state === 'camera') target.pushFrame(cameraPacket(1));
    await until(() => (target.session.describe().recording?.frameCount ?? 0) > 0, 'a first frame');
  }
  switch (event) {
    case 'model.load':
      return void (await call('model.load', { path: 'default', discard: true }));
    case 'source.open':
      return void (await call('source.open', { kind: 'embedded', discard: true }));
    case 'source.configure':
      return void (await call('source.configure', { schedule: { kind: 'constant', corruption: 'fog', severity: 2 } }));
    case 'stream.start':
      return void (await call('stream.start', { speed: 16, discard: true }));
    case 'stream.stop':
      return void (await call('stream.stop', {}));
    case 'stream.seek':
      return void (await call('stream.seek', { frame: 5 }));
    case 'stream.playback':
      return void (await call('stream.playback', { speed: 2 }));
    case 'stream.resetGate':
      return void (await call('stream.resetGate', {}));
    case 'camera.frame':
      return target.pushFrame(cameraPacket(0));
    case 'offline.start':
      return void (await call('stream.runOffline', { maxFrames: 40, discard: true }));
    case 'recording.reset':
      return void (await call('recording.reset', { discard: true }));
    case 'recording.label':
      return void (await call('stream.label', { frame: 0, label: 1 }));
    case 'trace.load':
      return void (await call('trace.load', { path: SAVED_TRACE, discard: true }));
    case 'trace.save':
      return void (await call('trace.save', { path: join(dir, `save-${Math.random()}.arrow`) }));
    case 'stream.end':
    case 'offline.end':
      throw new Error(`${event} happens by itself`);
  }
}

/** What a refusal must leave as it was (not the playback position, which a running stream moves). */
function settled(s: SessionState) {
  return {
    state: s.state,
    model: s.model?.paths ?? null,
    source: s.source?.description ?? null,
    recording: s.recording?.id ?? null,
  };
}

describe('every transition of the table, in every state', () => {
  const external = SESSION_TRANSITIONS.filter((t) => t.event !== 'stream.end' && t.event !== 'offline.end');
  for (const transition of external) {
    it(`${transition.event}: accepted in ${transition.from.join(', ')}; refused elsewhere`, async () => {
      for (const from of SESSION_STATES) {
        const fresh = from === 'no-model' ? new KnobBackend() : null;
        const target = fresh ?? backend;
        if (fresh === null) await reach(from as Exclude<SessionStateKind, 'no-model'>);
        const before = settled(target.session.describe());
        const accepted = transition.from.includes(from);
        try {
          if (accepted) {
            // The states the call went through: an offline run passes through offline-run to its end.
            const seen: SessionStateKind[] = [];
            const off = target.subscribe((event, data) => {
              if (event === 'session.state') seen.push((data as SessionState).state);
            });
            await fire(target, transition.event).finally(off);
            const after = target.session.describe().state;
            if (transition.to === 'same') expect(after, `${transition.event} from ${from}`).toBe(from);
            else
              expect(
                [...seen, after].some((s) => transition.to.includes(s)),
                `${transition.event} from ${from}: ${seen.join(' -> ')}`,
              ).toBe(true);
          } else {
            const refusal = await fire(target, transition.event).then(
              () => null,
              (error: unknown) => error,
            );
            expect(refusal, `${transition.event} was accepted in ${from}`).toBeInstanceOf(KnobError);
            expect((refusal as KnobError).code).toBe('NOT_AVAILABLE');
            expect(settled(target.session.describe())).toEqual(before);
          }
        } finally {
          await fresh?.close();
        }
      }
      await finishOfflineRun();
    });
  }

  it('stream.end: a file that runs out pauses the stream and keeps the recording', async () => {
    await finishOfflineRun();
    await backend.handle('source.open', { kind: 'dataset', path: SHORT_DATASET, discard: true });
    await backend.handle('stream.start', { speed: 16 });
    await until(() => state().state === 'paused', 'the end of the file');
    // A file never drops a frame, even at 16x: every frame of it is in the recording.
    expect(state().recording).toMatchObject({ origin: 'live', frameCount: 20, framesDropped: 0 });
  });

  it('offline.end: the run ends paused on its recording, or ready when it computed nothing', async () => {
    await reach('ready');
    const result = await backend.handle('stream.runOffline', { maxFrames: 64 });
    expect(result).toMatchObject({ framesProcessed: 64, error: null });
    expect(state()).toMatchObject({ state: 'paused', recording: { origin: 'offline', frameCount: 64, unsaved: true } });
    await reach('ready');
    const controller = new AbortController();
    controller.abort();
    const cancelled = await backend.call(
      'stream.runOffline',
      {},
      { signal: controller.signal, progress: () => undefined },
    );
    expect(cancelled).toMatchObject({ framesProcessed: 0, error: { code: 'CANCELLED' } });
    expect(state().state).toBe('ready');
  });
});

describe('the recording through the API', () => {
  it('trace.load after a recording makes the loaded trace current', async () => {
    await reach('paused');
    const recorded = state().recording!;
    const loaded = await backend.handle('trace.load', { path: SAVED_TRACE, discard: true });
    const now = state().recording!;
    expect(now.id).not.toBe(recorded.id);
    expect(now).toMatchObject({ origin: 'loaded', path: SAVED_TRACE, frameCount: loaded.frameCount, unsaved: false });
    const snapshot = await backend.handle('metrics.snapshot', {});
    expect(snapshot).toMatchObject({ recordingId: now.id, frameCount: loaded.frameCount });
    // The recorded stream is gone from every view: a recorded frame comes from the loaded trace.
    expect((await backend.handle('trace.frame', { frame: 0 })).recordingId).toBe(now.id);
  });

  it('a label given through the API shows in the rolling figures and the metrics within one update', async () => {
    await finishOfflineRun();
    await backend.handle('source.open', { kind: 'camera', discard: true });
    await backend.handle('stream.start', {});
    for (let i = 0; i < 6; i++) {
      backend.pushFrame(cameraPacket(i));
      await until(() => (state().recording?.frameCount ?? 0) > i, `camera frame ${i}`);
    }
    await backend.handle('stream.stop', {});
    expect((await backend.handle('metrics.snapshot', {})).labelledFrameCount).toBe(0);
    const recordingId = state().recording!.id;
    const seen = events.length;
    const trueClass = sample.labels[2];
    const result = await backend.handle('stream.label', { frame: 2, label: trueClass });
    expect(result).toMatchObject({ frame: 2, truth: -1, correction: trueClass, label: trueClass, labelledFrames: 1 });
    // The very next event carries the label: counts and rolling figures over that one frame.
    const next = events.slice(seen).find((e) => e.event === 'recording.changed');
    expect(next).toBeDefined();
    const change = next!.data as ApiEventData<'recording.changed'>;
    expect(change.recording).toMatchObject({ id: recordingId, labelledFrameCount: 1, unsaved: true });
    const accuracy = change.rolling.find((m) => m.name === 'accuracy');
    expect(accuracy?.identity).toBe('accuracy(top-1, last 1 labelled frames)');
    const snapshot = await backend.handle('metrics.snapshot', {});
    expect(snapshot.labelledFrameCount).toBe(1);
    expect(snapshot.values.find((v) => v.name === 'accuracy')?.value).toBe(accuracy!.value);
    // Clearing it takes it out everywhere.
    await backend.handle('stream.label', { frame: 2, label: -1 });
    expect((await backend.handle('metrics.snapshot', {})).labelledFrameCount).toBe(0);
  });

  it('a seek while paused keeps the recording, and play continues it with its clock running on', async () => {
    await reach('paused');
    const before = state().recording!;
    await backend.handle('stream.seek', { frame: 500 });
    expect(state()).toMatchObject({
      state: 'paused',
      playback: { position: 500 },
      recording: { id: before.id, frameCount: before.frameCount },
    });
    await backend.handle('stream.start', {});
    await until(() => (state().recording?.frameCount ?? 0) >= before.frameCount + 3, 'frames after the seek');
    await backend.handle('stream.stop', {});
    const saved = join(dir, 'after-seek.arrow');
    await backend.handle('trace.save', { path: saved });
    const { readTraceFile } = await import('../../src-main/core/recording/trace-arrow');
    const file = await readTraceFile(saved);
    const sourceFrame = file.trace.metadata.source_frame;
    expect(sourceFrame.kind === 'number' && sourceFrame.values[before.frameCount]).toBe(500);
    const t = file.trace.timestampsSeconds;
    for (let i = 1; i < file.trace.frameCount; i++) expect(t[i]).toBeGreaterThan(t[i - 1]);
  });

  it('an edited schedule applies from the next frame, and every frame records the corruption it got', async () => {
    await finishOfflineRun();
    await backend.handle('source.open', {
      kind: 'embedded',
      schedule: { kind: 'constant', corruption: 'fog', severity: 1 },
      discard: true,
    });
    await backend.handle('stream.start', { speed: 4 });
    await until(() => (state().recording?.frameCount ?? 0) >= 10, 'ten frames');
    const before = state().recording!.frameCount;
    const configured = await backend.handle('source.configure', {
      schedule: { kind: 'constant', corruption: 'fog', severity: 4 },
    });
    expect(configured.schedule).toEqual({ kind: 'constant', corruption: 'fog', severity: 4 });
    await until(() => (state().recording?.frameCount ?? 0) >= before + 10, 'ten frames more');
    await backend.handle('stream.stop', {});
    const saved = join(dir, 'edited.arrow');
    await backend.handle('trace.save', { path: saved });
    const { readTraceFile } = await import('../../src-main/core/recording/trace-arrow');
    const severity = (await readTraceFile(saved)).trace.metadata.severity;
    const values = severity.kind === 'number' ? Array.from(severity.values) : [];
    const first = values.indexOf(4);
    // The frame in flight when the edit came keeps the old schedule; the next one has the new.
    expect(first).toBeGreaterThanOrEqual(before);
    expect(first).toBeLessThanOrEqual(before + 2);
    expect(values.slice(0, first).every((v) => v === 1)).toBe(true);
    expect(values.slice(first).every((v) => v === 4)).toBe(true);
    // A colour corruption on the grayscale model is refused, naming why.
    await expect(
      backend.handle('source.configure', { schedule: { kind: 'constant', corruption: 'saturate', severity: 2 } }),
    ).rejects.toThrow(/saturate changes colour saturation; the model's input is grayscale/);
  });

  it('a discarding transition without discard: true is refused and changes nothing', async () => {
    await reach('paused');
    expect(state().recording!.unsaved).toBe(true);
    const attempts: Array<[string, () => Promise<unknown>]> = [
      ['model.load', () => backend.handle('model.load', { path: 'default' })],
      ['source.open', () => backend.handle('source.open', { kind: 'embedded' })],
      ['offline.start', () => backend.handle('stream.runOffline', {})],
      ['recording.reset', () => backend.handle('recording.reset', {})],
      ['trace.load', () => backend.handle('trace.load', { path: SAVED_TRACE })],
    ];
    for (const [event, attempt] of attempts) {
      const before = state();
      const refusal = await attempt().then(
        () => null,
        (error: unknown) => error,
      );
      expect(refusal, event).toBeInstanceOf(KnobError);
      expect((refusal as KnobError).code, event).toBe('WOULD_DISCARD');
      expect((refusal as KnobError).message).toMatch(
        / would discard the current recording \(\d+ frames, \d+ labelled, never saved\)$/,
      );
      expect(state(), event).toEqual(before);
    }
    // stream.start discards only a recording it cannot continue: an offline run's.
    await backend.handle('stream.runOffline', { maxFrames: 32, discard: true });
    const offline = state();
    await expect(backend.handle('stream.start', {})).rejects.toMatchObject({ code: 'WOULD_DISCARD' });
    expect(state()).toEqual(offline);
    // Saved work is not discarded work: after trace.save nothing asks.
    await backend.handle('trace.save', { path: join(dir, 'offline.arrow') });
    await backend.handle('stream.start', { speed: 16 });
    expect(state().state).toBe('playing');
    await backend.handle('stream.stop', {});
  });
});

describe('the documentation', () => {
  it("docs/ARCHITECTURE.md's state diagram is the one the transition table draws", () => {
    const doc = readFileSync('docs/ARCHITECTURE.md', 'utf8');
    expect(doc).toContain(sessionStateDiagram());
  });
});
