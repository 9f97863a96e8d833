import { stopIfCancelled, type CancelSignal } from '../../../src-shared/cancel-signal';
import type { LogitArray } from '../../../src-shared/fusion/logits';
import type { SoftmaxRegression } from '../../../src-shared/calibrators/softmax-regression';
import type { GateTargetNetwork } from '../../../src-shared/heads/gate-target-network';
import {
  assembledHeads,
  type HeadsData,
  type HeadsFit,
  type HeadsSplit,
  type HeadsStage,
} from '../../../src-shared/heads/knob-heads';
import { callOnFreshThread } from '../workers/fresh-thread';

export type HeadsStageRequest = { data: HeadsData; seed: number } & (
  | { stage: 'branch'; branch: 'static' | 'dynamic' }
  | { stage: 'gate'; branches: { staticHead: SoftmaxRegression; dynamicHead: SoftmaxRegression } }
);
export type HeadsStageResult =
  | { stage: 'branch'; fitted: HeadsStage<SoftmaxRegression> }
  | { stage: 'gate'; fitted: HeadsStage<GateTargetNetwork>; split: HeadsSplit };

/**
 * fitKnobHeads (src-shared/heads/knob-heads.ts) off the caller's thread: the static and dynamic
 * heads at once on two threads (they are independent), then the gate network on a third, each a
 * fresh thread (heads-worker.ts) that a cancel ends at once. The same stages in the same order as
 * on one thread, so the same heads to the bit. A stage that fails ends the other branch's thread
 * too (it would otherwise fit on for a minute with nobody waiting). The features and the recorded
 * branch are read in place by every thread from shared memory (copied there once when they are not
 * shared already: at 60,000 x 2,048 the features are 490 MB); each branch's thread builds its own
 * standardised rows (at most 20,000 x width doubles), so the two branches at once take twice the
 * one-thread fit's working memory.
 */
export async function fitKnobHeadsOnThreads(
  data: HeadsData,
  options: { seed: number; signal?: CancelSignal; onProgress?: (stage: string, done: number, total: number) => void },
): Promise<HeadsFit> {
  stopIfCancelled(options.signal, 'the Knob heads fit was cancelled');
  const shared: HeadsData = {
    ...data,
    features: inSharedMemory(data.features),
    recordedDynamic: inSharedMemory(data.recordedDynamic),
  };
  // the caller's cancel, or a stage's failure: either ends every thread still fitting
  const stop = new AbortController();
  const onCancel = () => stop.abort();
  options.signal?.addEventListener('abort', onCancel, { once: true });
  const onThread = (request: HeadsStageRequest) =>
    callOnFreshThread<HeadsStageRequest, HeadsStageResult>(
      import.meta.url,
      'heads-worker',
      'the Knob heads fit',
      request,
      stop.signal,
    ).catch((error: unknown) => {
      stop.abort();
      throw error;
    });
  try {
    return await stagesOnThreads(shared, options, onThread);
  } finally {
    options.signal?.removeEventListener('abort', onCancel);
  }
}

async function stagesOnThreads(
  shared: HeadsData,
  options: { seed: number; onProgress?: (stage: string, done: number, total: number) => void },
  onThread: (request: HeadsStageRequest) => Promise<HeadsStageResult>,
): Promise<HeadsFit> {
  // a stage is named as it starts (as fitKnobHeads names them): the branches' one stage until both end
  const branches = 'static and dynamic heads (two threads)';
  let done = 0;
  options.onProgress?.(branches, done, 3);
  const branch = async (which: 'static' | 'dynamic') => {
    const answer = await onThread({ stage: 'branch', branch: which, data: shared, seed: options.seed });
    if (answer.stage !== 'branch') throw new Error(`the ${which} head's stage answered as the ${answer.stage}'s`);
    if (++done < 2) options.onProgress?.(branches, done, 3);
    return answer.fitted;
  };
  const [staticHead, dynamicHead] = await Promise.all([branch('static'), branch('dynamic')]);
  options.onProgress?.('gate target network', done, 3);
  const gate = await onThread({
    stage: 'gate',
    data: shared,
    seed: options.seed,
    branches: { staticHead: staticHead.fitted, dynamicHead: dynamicHead.fitted },
  });
  if (gate.stage !== 'gate') throw new Error(`the gate's stage answered as the ${gate.stage}'s`);
  options.onProgress?.('gate target network', 3, 3);
  return assembledHeads(gate.split, staticHead, dynamicHead, gate.fitted);
}

/** The array itself when its memory is shared; else a copy in shared memory. */
function inSharedMemory<T extends LogitArray>(values: T): T {
  if (values.buffer instanceof SharedArrayBuffer) return values;
  const copy = (
    values instanceof Float32Array
      ? new Float32Array(new SharedArrayBuffer(values.byteLength))
      : new Float64Array(new SharedArrayBuffer(values.byteLength))
  ) as T;
  copy.set(values);
  return copy;
}
