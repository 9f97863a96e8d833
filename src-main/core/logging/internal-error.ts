import { randomBytes } from 'node:crypto';
import { KnobError, toErrorPayload, type KnobErrorPayload } from '../../../src-shared/errors';
import type { Logger } from './logger';

/**
 * The one place an error becomes what the user sees. Bad input (a typed KnobError) is shown as it
 * is and logged as a warning; anything else is a defect: it is logged with its stack under a short
 * random id, and the payload carries the same id, so "internal error 3f9c2a1b" in the UI or the
 * CLI finds its stack in the log.
 */
export function newErrorId(): string {
  return randomBytes(4).toString('hex');
}

export function reportError(logger: Logger, error: unknown, context: Record<string, unknown> = {}): KnobErrorPayload {
  const payload = toErrorPayload(error);
  if (payload.code !== 'INTERNAL') {
    logger.warn({ ...context, code: payload.code }, payload.message);
    return payload;
  }
  const errorId = payload.errorId ?? newErrorId();
  const err = error instanceof Error ? error : new Error(String(error));
  logger.error({ ...context, errorId, err }, `internal error ${errorId}: ${payload.message}`);
  return { code: 'INTERNAL', message: payload.message, errorId };
}

/** The same, rethrowable: an internal error keeps its id on its way up (CLI, background tasks). */
export function reportedError(logger: Logger, error: unknown, context: Record<string, unknown> = {}): KnobError {
  return KnobError.fromPayload(reportError(logger, error, context));
}
