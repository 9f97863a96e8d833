/** The idle Live panel's words (idle-hint.ts): only what can be done now, never ▶ without a source. */
import { describe, expect, it } from 'vitest';
import { idleHint } from '../../src-renderer/lib/desk/idle-hint';
import type { SourceInfo } from '../../src-shared/api/session-state';

const source = (kind: SourceInfo['kind']) => ({ kind }) as SourceInfo;

describe('idleHint', () => {
  it('asks for a source before the play button, which is disabled without one', () => {
    expect(idleHint({ loading: false, hasModel: true, source: null, recordedFrames: 0 })).toBe(
      'Open a source (Source panel), then press ▶ to play it.',
    );
    expect(idleHint({ loading: false, hasModel: false, source: null, recordedFrames: 0 })).toMatch(/^Load a model/);
    expect(idleHint({ loading: true, hasModel: false, source: null, recordedFrames: 0 })).toBe('Loading…');
  });

  it('asks for ▶ once a source is open, the camera by its name, and offers the scrubber over a recording', () => {
    expect(idleHint({ loading: false, hasModel: true, source: source('embedded'), recordedFrames: 0 })).toBe(
      'Press ▶ to play the stream.',
    );
    expect(idleHint({ loading: false, hasModel: true, source: source('camera'), recordedFrames: 0 })).toBe(
      'Press ▶ to start the camera.',
    );
    expect(idleHint({ loading: false, hasModel: true, source: source('video'), recordedFrames: 12 })).toBe(
      'Scrub the recording above to see a frame, or press ▶ to play the stream.',
    );
  });
});
