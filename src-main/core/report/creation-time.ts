import { KnobError } from '../../../src-shared/errors';

/**
 * The time stamp an output file records as its creation (a bundle's manifest, its report and
 * trace, a run's outputs, a settings file): now, or SOURCE_DATE_EPOCH (seconds since the epoch)
 * when that is set, the reproducible-builds convention (reproducible-builds.org/specs/source-date-epoch),
 * so the same inputs give byte-identical outputs. An unreadable value is an error, not a silent now.
 */
export function creationTime(env: Record<string, string | undefined> = process.env): Date {
  const epoch = env.SOURCE_DATE_EPOCH;
  if (epoch === undefined || epoch === '') return new Date();
  if (!/^\d{1,12}$/.test(epoch))
    throw new KnobError(
      'INVALID_SETTINGS',
      `SOURCE_DATE_EPOCH: '${epoch}' is not a whole number of seconds since 1970`,
    );
  return new Date(Number(epoch) * 1000);
}
