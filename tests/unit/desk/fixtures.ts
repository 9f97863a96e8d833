import type { ApiEventData, ApiResult, Knobs } from '../../../src-shared/api/contract';
import type { RecentRun } from '../../../src-shared/api/recent-runs';
import type { RecordingSummary, SessionState } from '../../../src-shared/api/session-state';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../../src-shared/gate/gate-settings';

/**
 * Backend answers for the desk's unit tests: the smallest values the API contract accepts (the
 * fake API checks each against it), with what a test varies as parameters.
 */
export function recording(id: number, change: Partial<RecordingSummary> = {}): RecordingSummary {
  return {
    id,
    origin: 'live',
    description: `recording ${id}`,
    frameCount: 0,
    labelledFrameCount: 0,
    framesDropped: 0,
    unsaved: false,
    path: null,
    featureWidth: null,
    labels: { fromSource: 0, imported: 0, corrections: 0, useCorrections: true, canUndo: false, canRedo: false },
    ...change,
  };
}

export function sessionState(change: Partial<SessionState> = {}): SessionState {
  return {
    state: 'paused',
    model: null,
    source: null,
    schedule: null,
    seed: 0,
    playback: { position: 0, speed: 1, loop: false },
    recording: null,
    error: null,
    ...change,
  };
}

export function knobs(version: number, gate: Partial<GateSettings> = {}): Knobs {
  return { gate: { ...DEFAULT_GATE_SETTINGS, ...gate }, calibrator: null, calibratorModel: null, version };
}

export function recordedFrame(recordingId: number, frame: number, settingsVersion = 0): ApiResult<'trace.frame'> {
  return {
    recordingId,
    frame,
    timestampSeconds: frame / 30,
    settingsVersion,
    g: 0.5,
    uRef: 0.5,
    label: null,
    top: [{ classIndex: 0, label: 'zero', fused: 0.9, static: 0.8, dynamic: 0.95 }],
    effectiveTemperature: 1,
    confidenceShrinkageRatio: 1,
    branchesDisagree: false,
    corruption: null,
    severity: 0,
    image: null,
  };
}

export function streamUpdate(recordingId: number, frame: number, settingsVersion = 0): ApiEventData<'stream.update'> {
  return {
    ...recordedFrame(recordingId, frame, settingsVersion),
    sourceFrame: frame,
    framesProcessed: frame + 1,
    framesDropped: 0,
    endToEndMs: 1,
    rolling: [],
    image: { width: 1, height: 1, channels: 1, base64: 'AA==' },
  };
}

export function metricsSnapshot(
  recordingId: number,
  change: Partial<ApiResult<'metrics.snapshot'>> = {},
): ApiResult<'metrics.snapshot'> {
  // a snapshot of a recording without labelled frames: no figure, no diagram
  const nothingComputed = { values: [], intervals: [], classReliability: [], groups: [] };
  const noDiagram = { reliability: null, smooth: null, histogram: null, tce: null };
  return {
    recordingId,
    settingsVersion: 0,
    calibrator: null,
    frameCount: 0,
    labelledFrameCount: 0,
    window: 'all recorded frames',
    groupBy: 'none',
    binning: {
      choice: { scheme: 'equal-width', bins: 15, norm: 'L1' },
      identity: '15 equal-width bins, [lo,hi) last closed',
      name: 'ECE',
      figureIdentity: 'ECE(top-label, 15 equal-width bins, [lo,hi) last closed, L1)',
      label: 'ECE (15 equal-width bins)',
    },
    computeMs: 1,
    ...nothingComputed,
    ...noDiagram,
    ...change,
  };
}

export const RUN_A = 'run-20250101T000000Z-000000000001';
export const RUN_B = 'run-20250102T000000Z-000000000002';

export function recentRun(id: string, change: Partial<RecentRun> = {}): RecentRun {
  return {
    id,
    keptAt: '2025-01-01T00:00:00Z',
    description: id,
    origin: 'live',
    model: null,
    source: null,
    schedule: null,
    seed: 0,
    settings: { ...DEFAULT_GATE_SETTINGS },
    frameCount: 10,
    labelledFrameCount: 10,
    position: 10,
    bytes: 1000,
    name: '',
    tags: [],
    notes: '',
    ...change,
  };
}

export function series(recordingId: number, settingsVersion: number, g: number[]): ApiResult<'recording.series'> {
  const zeros = g.map(() => 0);
  return {
    recordingId,
    settingsVersion,
    frameCount: g.length,
    tSeconds: g.map((_, i) => i / 30),
    g,
    uRef: zeros,
    severity: zeros,
    rollingAccuracy: g.map(() => null),
    rollingConfidence: g.map(() => null),
    rollingWindowFrames: 300,
  };
}
