import type { SessionStateKind, SourceInfo } from '../../../src-shared/api/session-state';
import type { CorruptionSchedule } from '../../../src-shared/corruptions';
import type { LivePipeline } from '../engine/live-pipeline';
import type { InferenceClient } from '../inference/inference-client';
import type { Recording } from '../recording/recording';
import type { FrameSource } from '../sources/frame-source';
import type { CalibratorTarget } from './knob-store';

/**
 * The session's states: one explicit union, each variant holding exactly what exists in it (a
 * pipeline only while a live recording can continue, a controller only during an offline run).
 * SESSION_TRANSITIONS (transitions.ts) lists which events lead from which kind to which.
 */
export interface OpenedSource {
  info: SourceInfo;
  /** Null for a camera: its frames are pushed by the renderer. */
  frames: FrameSource | null;
  schedule: CorruptionSchedule;
  seed: number;
  /** The model's feature width the live recording keeps, or null (source.open's recordFeatures). */
  featureWidth: number | null;
}

export type State =
  | { kind: 'no-model' }
  | { kind: 'ready'; model: InferenceClient; source: OpenedSource | null }
  | { kind: 'playing'; model: InferenceClient; source: OpenedSource; recording: Recording; pipeline: LivePipeline }
  | { kind: 'camera'; model: InferenceClient; source: OpenedSource; recording: Recording; pipeline: LivePipeline }
  | {
      kind: 'paused';
      model: InferenceClient | null;
      source: OpenedSource | null;
      recording: Recording;
      /** The live pipeline that resumes the recording (with its gate state); null for complete recordings. */
      pipeline: LivePipeline | null;
    }
  | { kind: 'offline-run'; model: InferenceClient; source: OpenedSource; controller: AbortController };

/** The kinds in which the model is running a stream: nothing else may run it meanwhile. */
export const MODEL_BUSY_KINDS: readonly SessionStateKind[] = ['playing', 'camera', 'offline-run'];

export const modelOf = (s: State): InferenceClient | null => ('model' in s ? s.model : null);
export const sourceOf = (s: State): OpenedSource | null => ('source' in s ? s.source : null);
export const recordingOf = (s: State): Recording | null => ('recording' in s ? s.recording : null);
export const pipelineOf = (s: State): LivePipeline | null => ('pipeline' in s ? s.pipeline : null);

/** `state` with another description of its source (a schedule, a camera's identity): the kind stays. */
export function withSource(state: State, source: OpenedSource): State {
  return state.kind === 'no-model' ? state : ({ ...state, source } as State);
}

/** What a calibrator set in `state` is checked against: the loaded model and the current recording's features. */
export function calibratorTargetOf(state: State): CalibratorTarget {
  const recording = recordingOf(state);
  return {
    model: modelOf(state)?.description ?? null,
    recording: recording === null ? null : { featureWidth: recording.trace.features?.width ?? null },
  };
}
