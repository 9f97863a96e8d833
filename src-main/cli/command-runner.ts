import { dirname } from 'node:path';
import { KnobError } from '../../src-shared/errors';
import { reportError } from '../core/logging/internal-error';
import { defaultLogDirectory } from '../core/logging/log-location';
import { openLogFile, silentLog, type BackendLog } from '../core/logging/logger';
import { UsageError } from './usage-error';
import type { Command } from './knob';

/**
 * Running one command (knob.ts finds it): the log opened (--verbose, --log-file), the command run,
 * and its failure reported:
 * exit 2 and one line for bad usage, 1 and one line for a failure, with the id of the log line
 * for an internal error.
 */
/** The CLI's log: --log-file, else the app's rolling log folder (no log at all if it cannot be written). */
async function openCliLog(verbose: boolean, logFile: string | undefined): Promise<BackendLog> {
  const level = verbose ? 'debug' : 'info';
  const mirror = verbose ? process.stderr : undefined;
  if (logFile !== undefined) return openLogFile({ directory: dirname(logFile), file: logFile, level, mirror });
  try {
    return await openLogFile({ directory: defaultLogDirectory(), level, mirror });
  } catch {
    return silentLog();
  }
}

/** Runs `load`'s command with its arguments (the global options already taken out), logging to the CLI's log. */
export async function runCommand(
  name: string,
  load: () => Promise<Command>,
  args: string[],
  options: { verbose: boolean; logFile: string | undefined },
): Promise<number> {
  let log: BackendLog = silentLog();
  try {
    log = await openCliLog(options.verbose, options.logFile);
    log.logger.info({ command: name, args }, `knob ${name}`);
    return await (
      await load()
    )(args);
  } catch (error) {
    return reportFailure(error, log);
  } finally {
    await log.close();
  }
}

/**
 * Exit code and one line on stderr: 2 for bad usage, 1 for a failure. An internal error (a defect)
 * is logged with its stack under an id that the line shows.
 */
export function reportFailure(error: unknown, log: BackendLog): number {
  if (
    error instanceof UsageError ||
    (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))
  ) {
    process.stderr.write(`knob: ${error.message}\nRun 'knob --help' for usage.\n`);
    return 2;
  }
  if (error instanceof KnobError && error.code === 'INVALID_SETTINGS') {
    process.stderr.write(`knob: ${error.message}\n`);
    return 2;
  }
  const payload = reportError(log.logger, error, { command: 'knob' });
  const firstLine = payload.message.split('\n')[0];
  if (payload.errorId === undefined) {
    process.stderr.write(`knob: ${firstLine}\n`);
  } else {
    const where = log.currentFile();
    process.stderr.write(
      `knob: internal error ${payload.errorId}: ${firstLine}${where ? ` (details in ${where})` : ''}\n`,
    );
  }
  return 1;
}
