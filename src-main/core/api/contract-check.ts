import { API_EVENTS, API_METHODS, type ApiEvent, type ApiMethod } from '../../../src-shared/api/contract';
import { KnobError } from '../../../src-shared/errors';
import { describeIssues } from '../../../src-shared/zod-issues';

/**
 * Results and events checked against their schemas: on in the tests (KNOB_CHECK_CONTRACT=1, set by
 * the test configuration), so every result and event any test produces is held to the contract; off
 * in the app, where the types already say the same and the checks would cost time on every frame.
 * A mismatch is a defect of the backend: an INTERNAL error naming the method or event and the field.
 */
export function contractCheckingRequested(): boolean {
  return process.env.KNOB_CHECK_CONTRACT === '1';
}

export function checkResult(method: ApiMethod, result: unknown): void {
  const parsed = API_METHODS[method].result.safeParse(result);
  if (!parsed.success) {
    throw new KnobError(
      'INTERNAL',
      `the result of ${method} breaks the API contract: ${describeIssues(parsed.error.issues, '(result)', ['result'])}`,
    );
  }
}

export function checkEvent(event: ApiEvent, data: unknown): void {
  const parsed = API_EVENTS[event].safeParse(data);
  if (!parsed.success) {
    throw new KnobError(
      'INTERNAL',
      `the ${event} event breaks the API contract: ${describeIssues(parsed.error.issues, '(data)', ['data'])}`,
    );
  }
}
