import type { ThresholdCalibration } from '../../../src-shared/drift/false-alarm-threshold';
import type { ThresholdRequest } from '../../../src-shared/drift/monitor';
import { startEntryWorker } from '../workers/entry-worker';
import { ThreadChannel } from '../workers/worker-channel';

/** A signal's simulation costs about one unit, and each windowed test on it about one more than a CUSUM. */
const COST = { cusum: 0.5, 'window-ks': 1 } as const;
const costOf = (request: ThresholdRequest) => 1 + request.specs.reduce((sum, spec) => sum + COST[spec.detector], 0);

type ThresholdThread = ThreadChannel<ThresholdRequest[], ThresholdCalibration[][]>;

/**
 * Threads for one monitor's thresholds (one `calibrate`), started before the monitor has its requests: a thread takes
 * about 0.1 s to load its modules, which it does while the caller computes the signals. A thread
 * is ended as soon as its share is calibrated; `close` ends them all, used or not, and waits until
 * they have (a thread still loading ends once it has loaded: worker-channel.ts).
 */
export class ThresholdThreads {
  private readonly threads: ThresholdThread[];

  /** `count` threads: one a signal to calibrate, at most one a core. */
  constructor(count: number) {
    this.threads = Array.from(
      { length: Math.max(1, count) },
      () =>
        new ThreadChannel<ThresholdRequest[], ThresholdCalibration[][]>(
          startEntryWorker(import.meta.url, 'threshold-worker'),
          'a drift-threshold thread',
          { cancelEndsThread: true },
        ),
    );
  }

  /**
   * The thresholds of each request (one a signal), each thread given a share of about equal cost
   * (largest first, to the least loaded). The answers come back in the order of `requests`. When
   * `signal` aborts, the threads end (the simulation is synchronous: ending its thread is the way
   * to stop it).
   */
  async calibrate(requests: readonly ThresholdRequest[], signal?: AbortSignal): Promise<ThresholdCalibration[][]> {
    const work = requests
      .map((request, index) => ({ request, index }))
      .sort((a, b) => costOf(b.request) - costOf(a.request));
    const shares = this.threads
      .slice(0, Math.min(this.threads.length, work.length))
      .map((thread) => ({ thread, cost: 0, items: [] as typeof work }));
    for (const w of work) {
      const least = shares.reduce((a, b) => (b.cost < a.cost ? b : a));
      least.items.push(w);
      least.cost += costOf(w.request);
    }
    const answers: ThresholdCalibration[][] = requests.map(() => []);
    await Promise.all(
      shares.map(async ({ thread, items }) => {
        // the reference alone, not the whole signal a subarray views
        const sent = items.map(({ request }) => ({ ...request, reference: request.reference.slice() }));
        const calibrations = await thread.call(sent, { signal });
        items.forEach(({ index }, i) => (answers[index] = calibrations[i]!));
        // done with: it ends while the other threads work (close() awaits it)
        void thread.close();
      }),
    );
    return answers;
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((thread) => thread.close()));
  }
}
