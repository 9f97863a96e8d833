import { KnobError } from '../../../src-shared/errors';

/**
 * A file open that failed for want of a file descriptor (EMFILE: this process is at its limit;
 * ENFILE: the whole system is) says nothing about the file: the same open works once descriptors
 * are free again. So it is not bad input but a passing condition, NOT_AVAILABLE, and the message
 * says to retry rather than blaming the path. Null for any other error.
 */
export function descriptorExhaustion(path: string, error: unknown, doing: string): KnobError | null {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code !== 'EMFILE' && code !== 'ENFILE') return null;
  const whose = code === 'EMFILE' ? 'this process' : 'the system';
  return new KnobError(
    'NOT_AVAILABLE',
    `${path}: cannot ${doing} now: too many open files (${code}: ${whose} has no file descriptor free); close some files or connections and retry`,
  );
}
