/** Issue 32: the work bar's time left, at the rate so far. */
import { describe, expect, it } from 'vitest';
import { secondsLeft, timeLeftText } from '../../src-renderer/lib/time-left';

describe('time left', () => {
  it('is the rate so far times the steps left, and nothing without a rate or a total', () => {
    expect(secondsLeft(2, 11, 4)).toBe(18); // 2 s a step, 9 steps left
    expect(secondsLeft(11, 11, 30)).toBe(0);
    expect(secondsLeft(0, 11, 4)).toBeNull();
    expect(secondsLeft(3, null, 4)).toBeNull();
    expect(secondsLeft(12, 11, 4)).toBeNull();
    expect(secondsLeft(3, 11, 0)).toBeNull();
  });

  it('says it in seconds, then minutes', () => {
    expect(timeLeftText(18.4)).toBe('about 18 s left');
    expect(timeLeftText(600)).toBe('about 10 min left');
    expect(timeLeftText(0.2)).toBe('almost done');
    expect(timeLeftText(null)).toBe('');
  });
});
