/**
 * Typed errors shared by every layer. A KnobError always serialises to `{ code, message }` so the
 * renderer, the CLI and the WebSocket host can show it without knowing where it came from. An
 * internal error (a bug, not bad input) also carries `errorId`: the short id of the log line that
 * holds its stack, shown to the user so a report can be matched to the log.
 */
export const KNOB_ERROR_CODES = [
  'INVALID_SETTINGS',
  'INVALID_INPUT',
  'INVALID_TRACE',
  'BAD_REQUEST',
  'UNKNOWN_METHOD',
  'REQUEST_TOO_LARGE',
  'UNAUTHORIZED',
  'NOT_AVAILABLE',
  /** The transition would discard a recording with unsaved work: save it, or repeat with `discard: true`. */
  'WOULD_DISCARD',
  /**
   * The output calibrator was fitted on another model than the one being loaded: the caller decides
   * (model.load's `calibrator: 'keep' | 'drop'`); nothing was changed.
   */
  'CALIBRATOR_OF_ANOTHER_MODEL',
  /** The inference process died or could not be restarted; the stream keeps its gate state. */
  'INFERENCE_CRASHED',
  'MISSING_PROGRAM',
  'CANCELLED',
  /** The transport to the backend went away (renderer side). */
  'DISCONNECTED',
  'INTERNAL',
] as const;
export type KnobErrorCode = (typeof KNOB_ERROR_CODES)[number];

export interface KnobErrorPayload {
  code: KnobErrorCode;
  message: string;
  /** Only on internal errors: the id of the log line with the stack. */
  errorId?: string;
}

export class KnobError extends Error {
  readonly code: KnobErrorCode;
  readonly errorId: string | undefined;

  constructor(code: KnobErrorCode, message: string, errorId?: string) {
    super(message);
    this.name = 'KnobError';
    this.code = code;
    this.errorId = errorId;
  }

  toPayload(): KnobErrorPayload {
    return this.errorId === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, errorId: this.errorId };
  }

  static fromPayload(payload: KnobErrorPayload): KnobError {
    return new KnobError(payload.code, payload.message, payload.errorId);
  }
}

export function isKnobErrorCode(code: string): code is KnobErrorCode {
  return (KNOB_ERROR_CODES as readonly string[]).includes(code);
}

/** Any thrown value as a payload; non-Knob errors become INTERNAL with their message kept. */
export function toErrorPayload(error: unknown): KnobErrorPayload {
  if (error instanceof KnobError) return error.toPayload();
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'INTERNAL', message };
}

/** The error a cancelled call rejects with, wherever the cancellation came from. */
export function cancelledError(what: string): KnobError {
  return new KnobError('CANCELLED', `${what} was cancelled`);
}
