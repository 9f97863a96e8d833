import type { SourceInfo } from '../../../src-shared/api/session-state';

/**
 * What the Live panel says while no frame is on screen: the next step the operator can take now,
 * so it never asks for a press of the play button while that button is disabled (no source).
 */
export function idleHint(desk: {
  loading: boolean;
  hasModel: boolean;
  source: SourceInfo | null;
  recordedFrames: number;
}): string {
  if (desk.loading) return 'Loading…';
  if (!desk.hasModel) return 'Load a model (Model panel), then open a source.';
  if (desk.source === null) return 'Open a source (Source panel), then press ▶ to play it.';
  const play = desk.source.kind === 'camera' ? 'press ▶ to start the camera' : 'press ▶ to play the stream';
  if (desk.recordedFrames > 0) return `Scrub the recording above to see a frame, or ${play}.`;
  return `${play[0].toUpperCase()}${play.slice(1)}.`;
}
