import { startEntryWorker } from '../workers/entry-worker';
import { RequestThread } from '../workers/request-thread';
import type { AnalysisAnswer, AnalysisRequest } from './analysis-worker';

/** The paper's analyses on a thread of their own, started for the request and ended after it. */
export async function analyseOnThread(request: AnalysisRequest): Promise<AnalysisAnswer> {
  const thread = new RequestThread<AnalysisRequest>(
    startEntryWorker(import.meta.url, 'analysis-worker'),
    'the analysis thread',
  );
  try {
    return (await thread.send(request)) as AnalysisAnswer;
  } finally {
    await thread.worker.terminate();
  }
}
