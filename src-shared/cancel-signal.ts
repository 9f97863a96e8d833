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
