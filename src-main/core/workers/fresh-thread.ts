import type { CancelSignal } from '../../../src-shared/cancel-signal';
import { startEntryWorker } from './entry-worker';
import { ThreadChannel } from './worker-channel';

/**
 * One request on a thread of its own (the main build's entry `entry`, named relative to
 * `callerUrl`), started for it and ended after it, or as soon as `signal` aborts (the call answers
 * CANCELLED and the thread's CPU is released: the work is synchronous, so ending the thread is the
 * only way to stop it). The request is copied to the thread.
 */
export async function callOnFreshThread<Request, Result>(
  callerUrl: string,
  entry: string,
  what: string,
  request: Request,
  signal?: CancelSignal,
  /** The thread's progress as it reports it (stage, done, total). */
  onProgress?: (stage: string, done: number, total: number) => void,
): Promise<Result> {
  const thread = new ThreadChannel<Request, Result>(startEntryWorker(callerUrl, entry), what, {
    cancelEndsThread: true,
  });
  try {
    return await thread.call(request, {
      signal,
      ...(onProgress === undefined ? {} : { onProgress: (p) => onProgress(p.stage, p.done, p.total) }),
    });
  } finally {
    await thread.close();
  }
}
