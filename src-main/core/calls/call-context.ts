/**
 * What a handler gets besides its params: the call's own cancellation (the client aborted it, or
 * its connection closed) and a way to report progress, which reaches the client as 'work.progress'
 * events tagged with the call's request id (throttled to about ten a second).
 */
export interface CallContext {
  signal: AbortSignal;
  progress(task: string, done: number, total: number | null): void;
}

/** A context for calls made in-process (tests, the CLI): never cancelled unless `signal` is given. */
export function localCall(signal: AbortSignal = new AbortController().signal): CallContext {
  return { signal, progress: () => undefined };
}
