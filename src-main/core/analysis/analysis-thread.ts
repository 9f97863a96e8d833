import { startEntryWorker } from '../workers/entry-worker';
import { RequestThread } from '../workers/request-thread';
import type { PaperAnalyses } from '../../../src-shared/analysis';
import type { AnalysisRequest } from './analysis-worker';

/**
 * The paper's analyses on a thread of their own, started for the request and ended after it, or as
 * soon as `signal` aborts (the call answers CANCELLED and the thread's CPU is released).
 */
export async function analyseOnThread(request: AnalysisRequest, signal?: AbortSignal): Promise<PaperAnalyses> {
  const thread = new RequestThread<AnalysisRequest>(
    startEntryWorker(import.meta.url, 'analysis-worker'),
    'the analysis thread',
  );
  try {
    return (await thread.send(request, signal)) as PaperAnalyses;
  } finally {
    await thread.worker.terminate();
  }
}
