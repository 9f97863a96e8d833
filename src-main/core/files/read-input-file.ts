import { readFile } from 'node:fs/promises';
import { KnobError } from '../../../src-shared/errors';

/** Reads a file the user named; a failure is an INVALID_INPUT error naming the file and the cause. */
export async function readInputFile(path: string): Promise<Uint8Array> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new KnobError(
      'INVALID_INPUT',
      `${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
}
