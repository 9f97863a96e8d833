/**
 * The one request/response correlator (src-shared/api/correlator.ts) that the renderer's API and
 * the worker protocol's channel (every thread and process the backend starts) share: replies settle their own call, a cancelled
 * call fails at once and tells the other side, a late reply is ignored, a dead channel fails all.
 */
import { describe, expect, it } from 'vitest';
import { Correlator } from '../../src-shared/api/correlator';
import { KnobError } from '../../src-shared/errors';

describe('Correlator', () => {
  it('settles each call with the reply under its own id, in any order', async () => {
    const calls = new Correlator<string>();
    const sent: number[] = [];
    const a = calls.call((id) => sent.push(id));
    const b = calls.call((id) => sent.push(id));
    expect(calls.size).toBe(2);
    calls.resolve(sent[1], 'second');
    calls.resolve(sent[0], 'first');
    await expect(a).resolves.toBe('first');
    await expect(b).resolves.toBe('second');
    expect(calls.resolve(sent[0], 'again')).toBe(false);
    expect(calls.size).toBe(0);
  });

  it('a rejected reply rejects its call only', async () => {
    const calls = new Correlator<number>();
    let id = 0;
    const failing = calls.call((i) => (id = i));
    const other = calls.call(() => undefined);
    calls.reject(id, new KnobError('INVALID_INPUT', 'bad frame'));
    await expect(failing).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(calls.size).toBe(1);
    calls.failAll(new KnobError('DISCONNECTED', 'gone'));
    await expect(other).rejects.toMatchObject({ code: 'DISCONNECTED' });
  });

  it('an aborted signal cancels the call at once, tells the other side, and ignores the late reply', async () => {
    const calls = new Correlator<number>();
    const controller = new AbortController();
    const cancelled: number[] = [];
    let id = 0;
    const call = calls.call((i) => (id = i), {
      signal: controller.signal,
      what: 'the run',
      onCancel: (i) => cancelled.push(i),
    });
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'CANCELLED', message: 'the run was cancelled' });
    expect(cancelled).toEqual([id]);
    expect(calls.resolve(id, 1)).toBe(false);
    const already = calls.call(() => undefined, { signal: controller.signal });
    await expect(already).rejects.toMatchObject({ code: 'CANCELLED' });
  });

  it('a send that throws rejects the call and leaves nothing pending', async () => {
    const calls = new Correlator<number>();
    await expect(
      calls.call(() => {
        throw new Error('channel closed');
      }),
    ).rejects.toThrow('channel closed');
    expect(calls.size).toBe(0);
  });
});
