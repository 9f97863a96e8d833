import { expect } from 'vitest';

/**
 * Setup file of every project: toEqual and toStrictEqual compare two typed arrays of one type by
 * their bytes first. Vitest compares them entry by entry through its generic iterable equality,
 * about 2.4 µs an entry here (a million-entry Float64Array took 2.4 s; one test spent 10 s of its
 * 10.4 comparing two fused-score tables). Equal bytes mean every entry is equal by Object.is, which
 * is what the matchers ask, so the answer is theirs; where the bytes differ (a failing assertion,
 * or NaNs with other payloads) the tester abstains and the matchers compare as before, with their
 * usual diff. Registered once per global scope: files that share a module graph share it too.
 */
const REGISTERED = Symbol.for('knob.typed-array-equality');

function sameBytes(a: unknown, b: unknown): boolean | undefined {
  if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b) || a instanceof DataView || b instanceof DataView)
    return undefined;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b) || a.byteLength !== b.byteLength) return undefined;
  // empty, or detached (its buffer transferred to a worker): nothing to speed up, and vitest's own
  // comparison says what a detached array is
  if (a.byteLength === 0) return undefined;
  const bytesOf = (view: ArrayBufferView) => Buffer.from(view.buffer, view.byteOffset, view.byteLength);
  return bytesOf(a).equals(bytesOf(b)) ? true : undefined;
}

const scope = globalThis as { [REGISTERED]?: true };
if (scope[REGISTERED] !== true) {
  expect.addEqualityTesters([sameBytes]);
  scope[REGISTERED] = true;
}
