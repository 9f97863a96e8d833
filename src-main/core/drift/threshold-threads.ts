import { availableParallelism } from 'node:os';
import type { ThresholdCalibration } from '../../../src-shared/drift/false-alarm-threshold';
import type { ThresholdRequest } from '../../../src-shared/drift/monitor';
import { startEntryWorker } from '../workers/entry-worker';
import { ThreadChannel } from '../workers/worker-channel';

/** A signal's simulation costs about one unit, and each windowed test on it about one more than a CUSUM. */
const COST = { cusum: 0.5, 'window-ks': 1 } as const;
const costOf = (request: ThresholdRequest) => 1 + request.specs.reduce((sum, spec) => sum + COST[spec.detector], 0);

/**
 * A monitor's thresholds (one request a signal) on up to one thread a core, each thread given a
 * share of about equal cost (largest first, to the least loaded), each started for the call and
 * ended after it, or as soon as `signal` aborts (the simulation is synchronous: ending its thread
 * is the way to stop it). The answers come back in the order of `requests`.
 */
export async function calibrateOnThreads(
  requests: readonly ThresholdRequest[],
  signal?: AbortSignal,
): Promise<ThresholdCalibration[][]> {
  const work = requests
    .map((request, index) => ({ request, index }))
    .sort((a, b) => costOf(b.request) - costOf(a.request));
  const threadCount = Math.max(1, Math.min(availableParallelism(), work.length));
  const shares = Array.from({ length: threadCount }, () => ({ cost: 0, items: [] as typeof work }));
  for (const w of work) {
    const least = shares.reduce((a, b) => (b.cost < a.cost ? b : a));
    least.items.push(w);
    least.cost += costOf(w.request);
  }
  const answers: ThresholdCalibration[][] = requests.map(() => []);
  await Promise.all(
    shares
      .filter((share) => share.items.length > 0)
      .map(async (share) => {
        const thread = new ThreadChannel<ThresholdRequest[], ThresholdCalibration[][]>(
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
