/** The time stamp outputs record: now, or SOURCE_DATE_EPOCH for reproducible outputs (creation-time.ts). */
import { describe, expect, it } from 'vitest';
import { creationTime } from '../../src-main/core/report/creation-time';

describe('creationTime', () => {
  it('is SOURCE_DATE_EPOCH (seconds since 1970) when set, now otherwise', () => {
    expect(creationTime({ SOURCE_DATE_EPOCH: '0' }).toISOString()).toBe('1970-01-01T00:00:00.000Z');
    expect(creationTime({ SOURCE_DATE_EPOCH: '1767225600' }).toISOString()).toBe('2026-01-01T00:00:00.000Z');
    const before = Date.now();
    const now = creationTime({}).getTime();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(creationTime({ SOURCE_DATE_EPOCH: '' }).getTime()).toBeGreaterThanOrEqual(before);
  });

  it('refuses a value that is not whole seconds, naming it', () => {
    for (const bad of ['-1', '1.5', '1e9', 'soon', '9999999999999'])
      expect(() => creationTime({ SOURCE_DATE_EPOCH: bad })).toThrow(
        `SOURCE_DATE_EPOCH: '${bad}' is not a whole number`,
      );
  });
});
