/**
 * What the desk shows of the stream (stream-view, replayed-views): scrubbing and replays at new
 * knobs go through the one latest-wins helper, so a result the operator has moved away from is
 * never left on screen.
 */
import { describe, expect, it } from 'vitest';
import { settle } from './contract-fake-api';
import { startedDesk } from './desk-harness';
import { knobs, recordedFrame, series, streamUpdate } from './fixtures';
import { MAX_CONDITION_SWITCHES } from '../../../src-shared/trace/condition-switches';

describe('scrubbing', () => {
  it('asks for one frame at a time, skips the frames dragged past meanwhile, and ends on the last one', async () => {
    const { desk, api } = await startedDesk();
    api.hold('trace.frame');
    void desk.stream.scrub(1);
    void desk.stream.scrub(2);
    void desk.stream.scrub(3);
    await settle();
    api.waiting('trace.frame')[0].answer(recordedFrame(1, 1));
    await settle();
    expect(api.callsOf('trace.frame')).toEqual([{ frame: 1 }, { frame: 3 }]);
    api.waiting('trace.frame')[1].answer(recordedFrame(1, 3));
    await settle();
    expect(desk.stream.scrubbed?.frame).toBe(3);
    expect(desk.stream.shown?.frame).toBe(3);
  });

  it('drops a frame that arrives after another recording became current', async () => {
    const { desk, api } = await startedDesk();
    api.hold('trace.frame');
    void desk.stream.scrub(4);
    await settle();
    api.emit('session.state', { ...desk.session!, recording: { ...desk.session!.recording!, id: 2 } });
    api.waiting('trace.frame')[0].answer(recordedFrame(1, 4));
    await settle();
    expect(desk.stream.scrubbed).toBeNull();
  });
});

describe('replays at new knobs while paused', () => {
  it('fill the charts with the latest knobs only: a replay superseded while in flight is dropped', async () => {
    const { desk, api } = await startedDesk();
    api.hold('recording.series');
    api.emit('knobs.changed', knobs(1));
    api.emit('knobs.changed', knobs(2));
    api.emit('knobs.changed', knobs(3));
    await settle();
    expect(api.waiting('recording.series')).toHaveLength(1);
    api.waiting('recording.series')[0].answer(series(1, 1, [0.1, 0.1]));
    await settle();
    expect(desk.stream.history.length).toBe(0);
    api.waiting('recording.series')[1].answer(series(1, 3, [0.3, 0.3, 0.3]));
    await settle();
    expect(Array.from(desk.stream.history.values('g'))).toEqual([0.3, 0.3, 0.3]);
  });

  it('show the frame on screen again at the new knobs', async () => {
    const { desk, api } = await startedDesk();
    api.emit('stream.update', streamUpdate(1, 6));
    api.handle('recording.series', () => series(1, 1, [0.2]));
    api.handle('trace.frame', ({ frame }) => ({ ...recordedFrame(1, frame, 1), g: 0.8 }));
    api.emit('knobs.changed', knobs(1));
    await settle();
    expect(desk.stream.update?.g).toBe(0.8);
    expect(desk.stream.update?.settingsVersion).toBe(1);
    // the replayed frame carries no image: the one on screen stays
    expect(desk.stream.update?.image.base64).toBe('AA==');
  });
});

describe("the condition-aware calibrator's switches", () => {
  it('live: a switch at the first update showing another condition, none without one; paused: the series', async () => {
    const { desk, api } = await startedDesk();
    const conditions = ['contrast', 'contrast', 'fog', 'fog', 'contrast'];
    conditions.forEach((condition, frame) =>
      api.emit('stream.update', { ...streamUpdate(1, frame), calibratorCondition: condition }),
    );
    await settle();
    expect(desk.stream.conditions).toEqual({
      switches: [
        { frame: 0, tSeconds: 0, condition: 'contrast' },
        { frame: 2, tSeconds: 2 / 30, condition: 'fog' },
        { frame: 4, tSeconds: 4 / 30, condition: 'contrast' },
      ],
      switchCount: 3,
      lastCondition: 'contrast',
      seenLive: true,
    });
    // the calibrator taken off: no condition, nothing marked
    api.emit('stream.update', streamUpdate(1, 5));
    await settle();
    expect(desk.stream.conditions).toBeNull();
    // paused, the knobs moved: the recording's series says where the condition switches
    const replayed = { switches: [{ frame: 0, tSeconds: 0, condition: 'fog' }], switchCount: 1, lastCondition: 'fog' };
    api.handle('recording.series', () => ({ ...series(1, 1, [0.2]), calibratorConditions: replayed }));
    api.emit('knobs.changed', knobs(1));
    await settle();
    expect(desk.stream.conditions).toEqual({ ...replayed, seenLive: false });
    // live again after the series: the count is of switches seen
    api.emit('stream.update', { ...streamUpdate(1, 6), calibratorCondition: 'contrast' });
    await settle();
    expect(desk.stream.conditions).toMatchObject({ switchCount: 2, lastCondition: 'contrast', seenLive: true });
    expect(desk.stream.conditions?.switches.map((s) => s.condition)).toEqual(['fog', 'contrast']);
  });

  it('live, keeps the newest switches once it holds MAX_CONDITION_SWITCHES', async () => {
    const { desk, api } = await startedDesk();
    for (let frame = 0; frame < MAX_CONDITION_SWITCHES + 3; frame++)
      api.emit('stream.update', { ...streamUpdate(1, frame), calibratorCondition: frame % 2 === 0 ? 'a' : 'b' });
    await settle();
    expect(desk.stream.conditions?.switchCount).toBe(MAX_CONDITION_SWITCHES + 3);
    expect(desk.stream.conditions?.switches).toHaveLength(MAX_CONDITION_SWITCHES);
    expect(desk.stream.conditions?.switches[0]?.frame).toBe(3);
    expect(desk.stream.conditions?.switches.at(-1)?.frame).toBe(MAX_CONDITION_SWITCHES + 2);
  });
});
