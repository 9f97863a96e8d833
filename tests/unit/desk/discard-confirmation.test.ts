/** Discarding unsaved work only with the operator's yes (src-renderer/lib/desk/confirmations.svelte.ts). */
import { describe, expect, it } from 'vitest';
import { KnobError } from '../../../src-shared/errors';
import { settle } from './contract-fake-api';
import { startedDesk } from './desk-harness';
import { recording, sessionState, streamUpdate } from './fixtures';

const unsaved = recording(1, { frameCount: 10, unsaved: true });

async function deskWithUnsavedWork() {
  const started = await startedDesk({ session: sessionState({ recording: unsaved }) });
  started.api.handle('recording.reset', ({ discard }) => {
    if (!discard) throw new KnobError('WOULD_DISCARD', 'the recording has 10 frames not saved');
    return sessionState({ state: 'ready', recording: recording(2) });
  });
  return started;
}

describe('the discard confirmation', () => {
  it('asks before a new recording replaces unsaved work; a no changes nothing', async () => {
    const { desk, api } = await deskWithUnsavedWork();
    const done = desk.transport.newRecording();
    await settle();
    const question = desk.confirmations.confirmation;
    expect(question?.title).toBe('Discard the recording?');
    expect(question?.message).toBe('the recording has 10 frames not saved. Export it first to keep it.');
    question!.answer(false);
    await done;
    expect(desk.confirmations.confirmation).toBeNull();
    expect(api.callsOf('recording.reset')).toEqual([{ discard: false }]);
    expect(desk.mirror.recordingId).toBe(1);
    expect(desk.errors.stream).toBeNull();
  });

  it('repeats the call with discard only after a yes, and the views of the old recording go', async () => {
    const { desk, api } = await deskWithUnsavedWork();
    api.emit('stream.update', streamUpdate(1, 3));
    expect(desk.stream.update?.frame).toBe(3);
    const done = desk.transport.newRecording();
    await settle();
    desk.confirmations.confirmation!.answer(true);
    await done;
    expect(api.callsOf('recording.reset')).toEqual([{ discard: false }, { discard: true }]);
    expect(desk.mirror.recordingId).toBe(2);
    expect(desk.stream.update).toBeNull();
  });

  it('does not ask about any other refusal: it is shown as an error', async () => {
    const { desk, api } = await startedDesk();
    api.handle('recording.reset', () => {
      throw new KnobError('NOT_AVAILABLE', 'an offline run is in progress');
    });
    await desk.transport.newRecording();
    expect(desk.confirmations.confirmation).toBeNull();
    expect(desk.errors.stream).toBe('an offline run is in progress');
  });

  it('answers an open question with no when another is asked', async () => {
    const { desk } = await startedDesk();
    const first = desk.confirmations.confirm('First?', 'one', 'Yes');
    const second = desk.confirmations.confirm('Second?', 'two', 'Yes');
    expect(await first).toBe(false);
    expect(desk.confirmations.confirmation?.title).toBe('Second?');
    desk.confirmations.confirmation!.answer(true);
    expect(await second).toBe(true);
  });

  it('asks whether a calibrator fitted on another model stays, and loads with the answer', async () => {
    const { desk, api } = await startedDesk();
    api.handle('model.load', ({ calibrator }) => {
      if (calibrator === undefined) throw new KnobError('CALIBRATOR_OF_ANOTHER_MODEL', 'fitted on model A');
      throw new KnobError('INVALID_INPUT', `loaded with calibrator ${calibrator}`);
    });
    const loading = desk.loading.loadModel({ path: 'other.onnx' });
    await settle();
    expect(desk.confirmations.confirmation?.title).toBe('Keep the output calibrator?');
    expect(desk.confirmations.confirmation?.cancelLabel).toBe('Drop it');
    desk.confirmations.confirmation!.answer(false);
    expect(await loading).toBe(false);
    expect(api.callsOf('model.load').map((p) => p.calibrator)).toEqual([undefined, 'drop']);
    expect(desk.errors.model).toBe('loaded with calibrator drop');
  });
});
