import { availableParallelism } from 'node:os';
import type { ThresholdCalibration } from '../../../src-shared/drift/false-alarm-threshold';
import type { ThresholdRequest } from '../../../src-shared/drift/monitor';
import { startEntryWorker } from '../workers/entry-worker';
import { ThreadChannel } from '../workers/worker-channel';

/** A windowed test's simulated frame costs about twice a CUSUM's (19 against 10 ns here). */
const COST = { cusum: 1, 'window-ks': 2 } as const;

/**
 * The thresholds of a monitor's pairs (null: a pair not tested) on up to one thread a core, each
 * thread given a share of about equal cost (largest first, to the least loaded), each started for
 * the call and ended after it, or as soon as `signal` aborts (the simulation is synchronous: ending
 * its thread is the way to stop it). The answers come back in the order of `requests`.
 */
export async function calibrateOnThreads(
  requests: ReadonlyArray<ThresholdRequest | null>,
  signal?: AbortSignal,
): Promise<Array<ThresholdCalibration | null>> {
  const work = requests
    .map((request, index) => ({ request, index }))
    .filter((w): w is { request: ThresholdRequest; index: number } => w.request !== null)
    .sort((a, b) => COST[b.request.spec.detector] - COST[a.request.spec.detector]);
  const threadCount = Math.max(1, Math.min(availableParallelism(), work.length));
  const shares = Array.from({ length: threadCount }, () => ({ cost: 0, items: [] as typeof work }));
  for (const w of work) {
    const least = shares.reduce((a, b) => (b.cost < a.cost ? b : a));
    least.items.push(w);
    least.cost += COST[w.request.spec.detector];
  }
  const answers: Array<ThresholdCalibration | null> = requests.map(() => null);
  await Promise.all(
    shares
      .filter((share) => share.items.length > 0)
      .map(async (share) => {
        const thread = new ThreadChannel<ThresholdRequest[], ThresholdCalibration[]>(
          startEntryWorker(import.meta.url, 'threshold-worker'),
          'a drift-threshold thread',
          { cancelEndsThread: true },
        );
        try {
          // the reference alone, not the whole signal a subarray views
          const sent = share.items.map(({ request }) => ({ ...request, reference: request.reference.slice() }));
          const calibrations = await thread.call(sent, { signal });
          share.items.forEach(({ index }, i) => (answers[index] = calibrations[i]!));
        } finally {
          await thread.close();
        }
      }),
  );
  return answers;
}
