import { KnobError } from '../../../src-shared/errors';

/** An error as the operator reads it: the message, and for a defect the id of its log line. */
export function errorText(error: unknown): string {
  if (error instanceof KnobError && error.errorId !== undefined) {
    return `${error.message} (internal error ${error.errorId}; details in the log)`;
  }
  return error instanceof Error ? error.message : String(error);
}
