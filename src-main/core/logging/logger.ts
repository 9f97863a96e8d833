import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import pinoRoll, { type RollingDestination } from 'pino-roll';
import { KnobError } from '../../../src-shared/errors';

export type { Logger } from 'pino';

/**
 * Structured logging for the backend: JSON lines (pino) to a rolling file in the app's log folder,
 * 10 MB a file, the 5 newest kept besides the active one, `current.log` pointing at it. Lines are
 * written synchronously: the log is for transitions and errors, not for every frame, and a line
 * must be on disk before a crash, not in a buffer. Every internal error is
 * logged with its stack under a short id (internal-error.ts) that the UI and the CLI show.
 */
export const LOG_FILE_BYTES = '10m';
export const LOG_FILES_KEPT = 5;

export interface BackendLog {
  logger: Logger;
  /** The file being written now; null for a logger that writes no file. */
  currentFile(): string | null;
  /** Writes out what is buffered (before reading the file, or before the process exits). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface LogFileOptions {
  directory: string;
  /** pino level; 'info' by default, 'debug' for --verbose. */
  level?: string;
  /** One fixed file instead of the rolling set (the CLI's --log-file). */
  file?: string;
  /** Also write every line here (the CLI's --verbose: to stderr). */
  mirror?: NodeJS.WritableStream;
}

export async function openLogFile(options: LogFileOptions): Promise<BackendLog> {
  let destination: RollingDestination;
  try {
    await mkdir(options.directory, { recursive: true });
    destination =
      options.file === undefined
        ? await pinoRoll({
            file: join(options.directory, 'knob-studio'),
            extension: '.log',
            size: LOG_FILE_BYTES,
            limit: { count: LOG_FILES_KEPT },
            mkdir: true,
            symlink: true,
            sync: true,
          })
        : (pino.destination({ dest: options.file, mkdir: true, sync: true }) as unknown as RollingDestination);
  } catch (error) {
    const where = options.file ?? options.directory;
    throw new KnobError(
      'INVALID_INPUT',
      `${where}: cannot write the log (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  const level = options.level ?? 'info';
  const streams = [{ level, stream: destination }, ...(options.mirror ? [{ level, stream: options.mirror }] : [])];
  const logger = pino(
    { level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.multistream(streams),
  );
  const flush = (): Promise<void> => new Promise((resolve) => destination.flush(() => resolve()));
  return {
    logger,
    currentFile: () =>
      'file' in destination && typeof destination.file === 'string' ? destination.file : (options.file ?? null),
    flush,
    close: async () => {
      await flush();
      destination.end();
    },
  };
}

/** A logger that writes nothing (library use and tests that do not look at the log). */
export function silentLog(): BackendLog {
  return {
    logger: pino({ level: 'silent' }),
    currentFile: () => null,
    flush: async () => undefined,
    close: async () => undefined,
  };
}
