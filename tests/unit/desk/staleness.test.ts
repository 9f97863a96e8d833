/** The staleness rule, once (src-renderer/lib/desk/staleness.ts): what a view was computed for against what is current. */
import { describe, expect, it } from 'vitest';
import { ofRecording, whyStale } from '../../../src-renderer/lib/desk/staleness';

describe('whyStale', () => {
  const basis = { recordingId: 1, groupBy: 'none', settingsVersion: 4, frameCount: 100, labelsRevision: 2 };

  it('is null while every part the view depends on is as it was computed', () => {
    expect(whyStale(basis, basis)).toBeNull();
  });

  it('names each part that moved on, in words', () => {
    expect(whyStale(basis, { ...basis, recordingId: 2 })).toBe('computed on another recording');
    expect(whyStale(basis, { ...basis, recordingId: null })).toBe('computed on another recording');
    expect(whyStale(basis, { ...basis, groupBy: 'severity' })).toBe('grouped by none, severity is asked for');
    expect(whyStale(basis, { ...basis, settingsVersion: 5 })).toBe('computed at settings v4, the knobs are at v5');
    expect(whyStale(basis, { ...basis, frameCount: 130 })).toBe('computed on 100 frames, 130 are recorded');
    expect(whyStale(basis, { ...basis, labelsRevision: 3 })).toBe('labels changed since');
    expect(whyStale({ slotsRevision: 1 }, { slotsRevision: 2 })).toBe('A or B changed since');
  });

  it('gives the first reason in a fixed order: the recording before the knobs before the frames before the labels', () => {
    const everything = { recordingId: 2, groupBy: 'none', settingsVersion: 5, frameCount: 130, labelsRevision: 3 };
    expect(whyStale(basis, everything)).toBe('computed on another recording');
    expect(whyStale(basis, { ...everything, recordingId: 1 })).toBe('computed at settings v4, the knobs are at v5');
    expect(whyStale(basis, { ...basis, frameCount: 130, labelsRevision: 3 })).toBe(
      'computed on 100 frames, 130 are recorded',
    );
  });

  it('compares only the parts the current state gives: a view of the last N frames ignores the frame count', () => {
    expect(whyStale(basis, { ...basis, frameCount: undefined })).toBeNull();
    expect(whyStale(basis, { settingsVersion: 4 })).toBeNull();
    expect(whyStale({ settingsVersion: 3 }, { settingsVersion: 4 })).not.toBeNull();
  });
});

describe('ofRecording', () => {
  it('accepts a result of the current recording only', () => {
    expect(ofRecording({ recordingId: 3 }, 3)).toBe(true);
    expect(ofRecording({ recordingId: 3 }, 4)).toBe(false);
    expect(ofRecording({ recordingId: 3 }, null)).toBe(false);
    expect(ofRecording(null, 3)).toBe(false);
  });
});
