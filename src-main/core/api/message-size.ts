import { KnobError } from '../../../src-shared/errors';

/**
 * The largest response one API call may send (a WebSocket message, or one IPC reply). The desk's
 * largest real answers (a recording's series at 100,000 points, a model's labels) are a few
 * megabytes; a 20 MB label once made one 360 MB WebSocket message. A larger answer is refused with
 * REQUEST_TOO_LARGE naming the method, rather than built, sent and held by both ends.
 */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * The size of `value` as JSON text, in UTF-8 bytes, counted by walking it and stopping as soon as
 * it passes `maxBytes` (then the figure returned is only known to exceed it): the answer is never
 * serialised to be measured. Strings count their UTF-8 bytes plus quotes (a slight undercount only
 * for escapes), numbers their digits; a value JSON cannot hold (a function) counts nothing, as JSON.stringify drops it.
 */
export function jsonBytesAtMost(value: unknown, maxBytes: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= maxBytes) {
    const item = stack.pop();
    if (typeof item === 'string') total += Buffer.byteLength(item, 'utf8') + 2;
    else if (typeof item === 'number' || typeof item === 'boolean' || item === null) total += String(item).length;
    else if (ArrayBuffer.isView(item)) total += item.byteLength * 4;
    else if (Array.isArray(item)) {
      total += 1 + item.length;
      for (const element of item) stack.push(element);
    } else if (typeof item === 'object' && item !== undefined) {
      for (const [key, element] of Object.entries(item)) {
        total += Buffer.byteLength(key, 'utf8') + 4;
        stack.push(element);
      }
      total += 2;
    }
  }
  return total;
}

/** Refuses an answer larger than MAX_RESPONSE_BYTES, naming the method. */
export function checkResponseSize(method: string, result: unknown, maxBytes = MAX_RESPONSE_BYTES): void {
  const bytes = jsonBytesAtMost(result, maxBytes);
  if (bytes > maxBytes)
    throw new KnobError(
      'REQUEST_TOO_LARGE',
      `the answer to ${method} is over ${maxBytes} bytes, the limit of one API message (a label, name or metadata value too long?)`,
    );
}
