import { startEntryWorker } from '../workers/entry-worker';
import { ThreadChannel } from '../workers/worker-channel';
import type { PaperAnalyses } from '../../../src-shared/analysis';
import type { AnalysisRequest } from './analysis-worker';

/**
 * The paper's analyses on a thread of their own, started for the request and ended after it, or as
 * soon as `signal` aborts (the call answers CANCELLED and the thread's CPU is released: the
 * computation is synchronous, so ending the thread is the only way to stop it).
 */
export async function analyseOnThread(request: AnalysisRequest, signal?: AbortSignal): Promise<PaperAnalyses> {
  const thread = new ThreadChannel<AnalysisRequest, PaperAnalyses>(
    startEntryWorker(import.meta.url, 'analysis-worker'),
    'the analysis thread',
    { cancelEndsThread: true },
  );
  try {
    return await thread.call(request, { signal });
  } finally {
    await thread.close();
  }
}
