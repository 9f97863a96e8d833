import { KnobError } from './errors';

/**
 * The part of AbortSignal that src-shared uses. Every runtime src-shared runs in (Node, the
 * renderer, Workers) has AbortSignal, but src-shared compiles without DOM or Node types, so it names
 * the shape it needs; a real AbortSignal fits it.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * `work`'s result, or a CANCELLED error (`message`) as soon as `signal` aborts; the work itself is
 * not stopped (its owner stops it, or others still wait for it).
 */
export function untilCancelled<T>(work: Promise<T>, signal: CancelSignal | undefined, message: string): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) return Promise.reject(new KnobError('CANCELLED', message));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new KnobError('CANCELLED', message));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Throws CANCELLED (`message`) when `signal` has aborted: what synchronous work calls between its
 * chunks (a bootstrap between resamples), so a cancelled computation stops within one chunk.
 */
export function stopIfCancelled(signal: CancelSignal | undefined, message: string): void {
  if (signal?.aborted === true) throw new KnobError('CANCELLED', message);
}
