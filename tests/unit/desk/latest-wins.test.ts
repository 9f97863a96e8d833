/** The one "latest request wins" helper (src-renderer/lib/desk/latest-wins.ts) every coalescing view uses. */
import { describe, expect, it } from 'vitest';
import { LatestWins } from '../../../src-renderer/lib/desk/latest-wins';
import { settle } from './contract-fake-api';

/** A run whose calls wait until the test answers them, in order of asking. */
function heldRuns<P, R>() {
  const waiting: Array<{ params: P; answer(result: R): void; refuse(error: Error): void }> = [];
  const run = (params: P) =>
    new Promise<R>((answer, refuse) => {
      waiting.push({ params, answer, refuse });
    });
  return { waiting, run };
}

function recorder<P, R>(options: { merge?: (a: P, b: P) => P; deliverSuperseded?: boolean } = {}) {
  const { waiting, run } = heldRuns<P, R>();
  const delivered: Array<[R, P]> = [];
  const failed: Array<[string, P]> = [];
  const busy: boolean[] = [];
  const helper = new LatestWins<P, R>({
    run,
    deliver: (result, params) => delivered.push([result, params]),
    fail: (error, params) => failed.push([(error as Error).message, params]),
    onBusy: (flag) => busy.push(flag),
    ...options,
  });
  return { helper, waiting, delivered, failed, busy };
}

describe('LatestWins', () => {
  it('runs one request at a time; requests made meanwhile collapse into the latest, and the superseded result is dropped', async () => {
    const { helper, waiting, delivered } = recorder<number, string>();
    void helper.request(1);
    void helper.request(2);
    void helper.request(3);
    await settle();
    expect(waiting.map((w) => w.params)).toEqual([1]);
    waiting[0].answer('frame 1');
    await settle();
    // 1 was superseded while in flight: its result is not shown; 2 never ran
    expect(delivered).toEqual([]);
    expect(waiting.map((w) => w.params)).toEqual([1, 3]);
    waiting[1].answer('frame 3');
    await settle();
    expect(delivered).toEqual([['frame 3', 3]]);
  });

  it('delivers a request that nothing superseded, and is idle afterwards', async () => {
    const { helper, waiting, delivered, busy } = recorder<number, string>();
    const settled = helper.request(7);
    expect(helper.busy).toBe(true);
    await settle();
    waiting[0].answer('seven');
    await settled;
    expect(delivered).toEqual([['seven', 7]]);
    expect(helper.busy).toBe(false);
    expect(busy).toEqual([true, false]);
  });

  it('merges requests that add up (knob turns) instead of replacing them', async () => {
    const { helper, waiting } = recorder<Record<string, number>, string>({ merge: (a, b) => ({ ...a, ...b }) });
    void helper.request({ zeta: 1 });
    void helper.request({ wn: 2 });
    void helper.request({ zeta: 3 });
    await settle();
    waiting[0].answer('first');
    await settle();
    expect(waiting.map((w) => w.params)).toEqual([{ zeta: 1 }, { wn: 2, zeta: 3 }]);
  });

  it('can deliver superseded results too, the latest still last', async () => {
    const { helper, waiting, delivered } = recorder<number, string>({ deliverSuperseded: true });
    void helper.request(1);
    void helper.request(2);
    await settle();
    waiting[0].answer('one');
    await settle();
    waiting[1].answer('two');
    await settle();
    expect(delivered.map(([result]) => result)).toEqual(['one', 'two']);
  });

  it("reports the latest request's failure, not a superseded one's, and goes on after either", async () => {
    const { helper, waiting, delivered, failed } = recorder<number, string>();
    void helper.request(1);
    void helper.request(2);
    await settle();
    waiting[0].refuse(new Error('first failed'));
    await settle();
    expect(failed).toEqual([]);
    waiting[1].refuse(new Error('second failed'));
    await settle();
    expect(failed).toEqual([['second failed', 2]]);
    void helper.request(3);
    await settle();
    waiting[2].answer('three');
    await settle();
    expect(delivered).toEqual([['three', 3]]);
  });

  it('resolves every request once the request that carries it has settled', async () => {
    const { helper, waiting } = recorder<number, string>();
    const order: string[] = [];
    void helper.request(1).then(() => order.push('1 settled'));
    void helper.request(2).then(() => order.push('2 settled'));
    void helper.request(3).then(() => order.push('3 settled'));
    await settle();
    waiting[0].answer('one');
    await settle();
    expect(order).toEqual(['1 settled']);
    waiting[1].answer('three');
    await settle();
    expect(order).toEqual(['1 settled', '2 settled', '3 settled']);
  });
});
