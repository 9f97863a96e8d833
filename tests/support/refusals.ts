import { expect } from 'vitest';
import { KnobError } from '../../src-shared/errors';

/** The KnobError a promise rejects with (the test fails when it resolves or rejects otherwise). */
export async function refusalOf(promise: Promise<unknown>): Promise<KnobError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(KnobError);
  return error as KnobError;
}

/** The message of the INVALID_INPUT KnobError `run` throws. */
export function invalidInputMessage(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(KnobError);
    expect((error as KnobError).code).toBe('INVALID_INPUT');
    return (error as KnobError).message;
  }
  throw new Error('expected a refusal');
}
