import type { CorruptionScheduleInput } from '../../../src-shared/corruptions/schedule';

/**
 * The schedule the desk opens the embedded stream with on first start (and its Source panel shows):
 * gaussian noise stepping to severity 3 at frame 150 and back to clean at frame 450, so the gate's
 * response to a shift is visible within seconds. A plain module (no runes), so the end-to-end tests
 * check the session against this value instead of a copy of it.
 */
export const FIRST_START_SCHEDULE: CorruptionScheduleInput = {
  kind: 'step',
  corruption: 'gaussian_noise',
  levels: [
    { atFrame: 0, severity: 0 },
    { atFrame: 150, severity: 3 },
    { atFrame: 450, severity: 0 },
  ],
};
