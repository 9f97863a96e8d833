/**
 * One request of a kind at a time, the latest winning: a request made while another is in flight
 * waits as the pending one, and a later request replaces it (or merges into it, where requests add
 * up, as knob changes do), so a knob turned quickly or a scrubber dragged costs one call in flight
 * and one waiting, never a queue. A result whose request was superseded meanwhile is dropped (it
 * describes what the operator has already moved away from), unless the owner asks for every result
 * (a scrubbed frame on its way still shows the drag moving); the latest request's result is always
 * delivered. Whether a delivered result still fits the desk (the same recording, still paused) is
 * the owner's check, in `deliver`.
 */
export interface LatestWinsOptions<P, R> {
  run(params: P): Promise<R>;
  deliver(result: R, params: P): void;
  fail(error: unknown, params: P): void;
  /** How a new request folds into the pending one; without it the new one replaces it. */
  merge?(pending: P, next: P): P;
  /** Deliver the results of superseded requests too (default: dropped). */
  deliverSuperseded?: boolean;
  /** Told when the helper starts working and when it has nothing left (for a busy flag). */
  onBusy?(busy: boolean): void;
}

interface Pending<P> {
  params: P;
  settled: Array<() => void>;
}

export class LatestWins<P, R> {
  private pending: Pending<P> | null = null;
  private inFlight = false;
  private draining = false;

  constructor(private readonly options: LatestWinsOptions<P, R>) {}

  /** A request in flight or waiting. */
  get busy(): boolean {
    return this.inFlight || this.pending !== null;
  }

  /** Asks for `params`; resolves once the request that carries it has settled (delivered, dropped or failed). */
  request(params: P): Promise<void> {
    return new Promise((settled) => {
      const { merge } = this.options;
      if (this.pending === null) this.pending = { params, settled: [settled] };
      else {
        this.pending.params = merge ? merge(this.pending.params, params) : params;
        this.pending.settled.push(settled);
      }
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    this.options.onBusy?.(true);
    let last = false;
    while (!last) {
      const settled = await this.runPending(this.pending!);
      last = this.pending === null;
      if (last) {
        // idle before the callers hear back: one that awaited its request finds the helper idle
        this.draining = false;
        this.options.onBusy?.(false);
      }
      for (const done of settled) done();
    }
  }

  /** Runs the pending request and delivers its outcome; returns the callers to tell. */
  private async runPending({ params, settled }: Pending<P>): Promise<Array<() => void>> {
    this.pending = null;
    this.inFlight = true;
    let outcome: { ok: true; result: R } | { ok: false; error: unknown };
    try {
      outcome = { ok: true, result: await this.options.run(params) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    // Not in flight while delivering: an owner that holds back while requests are busy (knob
    // sync) sees the last result as the settled state it is.
    this.inFlight = false;
    try {
      if (this.pending === null || this.options.deliverSuperseded) {
        if (outcome.ok) this.options.deliver(outcome.result, params);
        else this.options.fail(outcome.error, params);
      }
    } catch (error) {
      // an owner's defect must not wedge the helper: later requests still run
      console.error(error);
    }
    return settled;
  }
}
