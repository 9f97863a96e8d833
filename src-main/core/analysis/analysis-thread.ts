import { callOnFreshThread } from '../workers/fresh-thread';
import type { PaperAnalyses } from '../../../src-shared/analysis';
import type { AnalysisRequest } from './analysis-worker';

/**
 * The paper's analyses on a thread of their own, started for the request and ended after it, or as
 * soon as `signal` aborts (the call answers CANCELLED and the thread's CPU is released: the
 * computation is synchronous, so ending the thread is the only way to stop it).
 */
export function analyseOnThread(
  request: AnalysisRequest,
  signal?: AbortSignal,
  onProgress?: (stage: string, done: number, total: number) => void,
): Promise<PaperAnalyses> {
  return callOnFreshThread(import.meta.url, 'analysis-worker', 'the analysis thread', request, signal, onProgress);
}
