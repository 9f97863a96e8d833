import type { CancelSignal } from '../../../src-shared/cancel-signal';
import { fitBranchHead, fitGateHead, headsSplit } from '../../../src-shared/heads/knob-heads';
import { serve } from '../workers/worker-serve';
import type { HeadsStageRequest, HeadsStageResult } from './heads-threads';

/**
 * One stage of a Knob heads fit off the backend's event loop (heads-threads.ts): a branch's head or
 * the gate network, each a minute of L-BFGS on wide features that would otherwise stop the stream,
 * the desk's other calls and the cancel itself. The split is computed here again from the seed
 * (deterministic, and the features are shared, not copied); the gate's stage sends it back.
 */
function answer(request: HeadsStageRequest, signal: CancelSignal): HeadsStageResult {
  const split = headsSplit(request.data, request.seed);
  if (request.stage === 'branch')
    return { stage: 'branch', fitted: fitBranchHead(request.branch, request.data, split, signal) };
  return { stage: 'gate', fitted: fitGateHead(request.data, split, request.branches, request.seed, signal), split };
}

serve<HeadsStageRequest, HeadsStageResult>((request, context) => answer(request, context.signal));
