/**
 * Typed errors shared by every layer. A KnobError always serialises to `{ code, message }` so the
 * renderer, the CLI and the WebSocket host can show it without knowing where it came from.
 */
export type KnobErrorCode =
  | 'INVALID_SETTINGS'
  | 'INVALID_INPUT'
  | 'INVALID_TRACE'
  | 'BAD_REQUEST'
  | 'UNKNOWN_METHOD'
  | 'REQUEST_TOO_LARGE'
  | 'UNAUTHORIZED'
  | 'NOT_AVAILABLE'
  /** The inference process died or could not be restarted; the stream keeps its gate state. */
  | 'INFERENCE_CRASHED'
  | 'MISSING_PROGRAM'
  | 'CANCELLED'
  | 'INTERNAL';

export interface KnobErrorPayload {
  code: KnobErrorCode;
  message: string;
}

export class KnobError extends Error {
  readonly code: KnobErrorCode;

  constructor(code: KnobErrorCode, message: string) {
    super(message);
    this.name = 'KnobError';
    this.code = code;
  }

  toPayload(): KnobErrorPayload {
    return { code: this.code, message: this.message };
  }
}

/** Any thrown value as a payload; non-Knob errors become INTERNAL with their message kept. */
export function toErrorPayload(error: unknown): KnobErrorPayload {
  if (error instanceof KnobError) return error.toPayload();
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'INTERNAL', message };
}
