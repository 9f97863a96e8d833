/** The transport (src-renderer/lib/desk/transport.svelte.ts): play, pause, seek and playback state. */
import { describe, expect, it } from 'vitest';
import type { SessionState } from '../../../src-shared/api/session-state';
import { startedDesk } from './desk-harness';
import { recording, sessionState, streamUpdate } from './fixtures';

const live = recording(1, { frameCount: 10 });

describe('transport', () => {
  it('plays at the chosen speed and looping, and follows the live stream while it plays', async () => {
    const { desk, api } = await startedDesk();
    api.handle('stream.playback', ({ speed, loop }) =>
      sessionState({ recording: live, playback: { position: 0, speed: speed ?? 1, loop: loop ?? false } }),
    );
    await desk.transport.setPlayback({ speed: 4 });
    expect(desk.transport.speed).toBe(4);
    expect(api.callsOf('stream.playback')).toEqual([{ speed: 4 }]);
    await desk.transport.setPlayback({ loop: true });
    api.handle('stream.start', () => sessionState({ state: 'playing', recording: live }));
    await desk.transport.play();
    expect(api.callsOf('stream.start')).toEqual([{ speed: 4, loop: true, discard: false }]);
    expect(desk.running).toBe(true);
    api.emit('stream.update', { ...streamUpdate(1, 41), sourceFrame: 120 });
    expect(desk.transport.position).toBe(121);
    expect(desk.framesProcessed).toBe(42);
  });

  it('ignores a late update of another recording: the position and the frame on screen stay', async () => {
    const { desk, api } = await startedDesk({ session: sessionState({ state: 'playing', recording: live }) });
    api.emit('stream.update', { ...streamUpdate(1, 5), sourceFrame: 5 });
    api.emit('stream.update', { ...streamUpdate(7, 90), sourceFrame: 90 });
    expect(desk.transport.position).toBe(6);
    expect(desk.stream.update?.frame).toBe(5);
    expect(desk.stream.history.length).toBe(1);
  });

  it('pauses only a running stream, and resumes from the position the backend keeps', async () => {
    const { desk, api } = await startedDesk();
    api.handle('stream.stop', () => sessionState({ recording: live }));
    await desk.transport.pause();
    expect(api.callsOf('stream.stop')).toEqual([]);
    api.emit('session.state', sessionState({ state: 'playing', recording: live }));
    await desk.transport.pause();
    expect(api.callsOf('stream.stop')).toHaveLength(1);
    expect(desk.running).toBe(false);
  });

  it('seeks and rewinds, keeping the recording and its views', async () => {
    const { desk, api } = await startedDesk();
    const at = (position: number): SessionState =>
      sessionState({ recording: live, playback: { position, speed: 1, loop: false } });
    api.handle('stream.seek', ({ frame }) => at(frame));
    api.handle('stream.rewind', () => at(0));
    api.emit('stream.update', streamUpdate(1, 9));
    await desk.transport.seek(250);
    expect(api.callsOf('stream.seek')).toEqual([{ frame: 250 }]);
    expect(desk.transport.position).toBe(250);
    expect(desk.stream.update?.frame).toBe(9);
    await desk.transport.rewind();
    expect(desk.transport.position).toBe(0);
  });

  it('shows a refused play next to the transport, and nothing changes', async () => {
    const { desk, api } = await startedDesk();
    api.handle('stream.start', () => {
      throw new Error('no source is open');
    });
    await desk.transport.play();
    expect(desk.errors.stream).toBe('no source is open');
    expect(desk.running).toBe(false);
  });
});
