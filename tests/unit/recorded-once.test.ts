/**
 * The desk probes' recording cache (src-main/core/services/recorded-once.ts): one recording per key,
 * shared by the calls that ask for it while it runs; a waiter that cancels stops waiting at once
 * without cancelling the others' recording; the recording stops only when every waiter has
 * cancelled; a kept recording is returned without recording again.
 */
import { describe, expect, it } from 'vitest';
import { RecordedOnce } from '../../src-main/core/services/recorded-once';

/** A recording that finishes when told to, and says whether it was asked to stop. */
function controllable() {
  let finish!: (value: string) => void;
  const calls: AbortSignal[] = [];
  const record = (signal: AbortSignal) => {
    calls.push(signal);
    return new Promise<string>((resolve, reject) => {
      finish = resolve;
      signal.addEventListener('abort', () => reject(new Error('recording stopped')));
    });
  };
  return { record, calls, finish: (value: string) => finish(value) };
}

describe('RecordedOnce', () => {
  it('shares one recording among the calls that ask for it, then keeps it', async () => {
    const cache = new RecordedOnce<string>('probe');
    const recording = controllable();
    const a = cache.get('k', new AbortController().signal, recording.record);
    const b = cache.get('k', new AbortController().signal, recording.record);
    recording.finish('traces');
    expect(await a).toEqual({ recorded: 'traces', fresh: true });
    expect(await b).toEqual({ recorded: 'traces', fresh: true });
    expect(recording.calls).toHaveLength(1);
    expect(await cache.get('k', new AbortController().signal, recording.record)).toEqual({
      recorded: 'traces',
      fresh: false,
    });
    expect(recording.calls).toHaveLength(1);
  });

  it("one waiter's cancel ends its wait at once and leaves the others' recording running", async () => {
    const cache = new RecordedOnce<string>('probe');
    const recording = controllable();
    const first = new AbortController();
    const a = cache.get('k', first.signal, recording.record);
    const b = cache.get('k', new AbortController().signal, recording.record);
    first.abort();
    await expect(a).rejects.toMatchObject({ code: 'CANCELLED', message: 'the probe was cancelled' });
    expect(recording.calls[0]!.aborted).toBe(false);
    recording.finish('traces');
    expect(await b).toEqual({ recorded: 'traces', fresh: true });
  });

  it('stops the recording when every waiter has cancelled, and records again when asked after', async () => {
    const cache = new RecordedOnce<string>('probe');
    const recording = controllable();
    const [x, y] = [new AbortController(), new AbortController()];
    const a = cache.get('k', x.signal, recording.record);
    const b = cache.get('k', y.signal, recording.record);
    x.abort();
    y.abort();
    await expect(a).rejects.toMatchObject({ code: 'CANCELLED' });
    await expect(b).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(recording.calls[0]!.aborted).toBe(true);
    await Promise.resolve(); // the stopped recording's failure clears it
    const again = cache.get('k', new AbortController().signal, recording.record);
    expect(recording.calls).toHaveLength(2);
    recording.finish('second');
    expect((await again).recorded).toBe('second');
  });

  it('another key records anew; its result replaces the kept one', async () => {
    const cache = new RecordedOnce<string>('probe');
    const recording = controllable();
    const a = cache.get('one', new AbortController().signal, recording.record);
    recording.finish('first');
    await a;
    const b = cache.get('two', new AbortController().signal, recording.record);
    recording.finish('second');
    expect(await b).toEqual({ recorded: 'second', fresh: true });
    expect(recording.calls).toHaveLength(2);
  });
});
