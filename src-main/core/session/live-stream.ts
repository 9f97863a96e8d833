import type { KnobErrorPayload } from '../../../src-shared/errors';
import { LivePipeline } from '../engine/live-pipeline';
import type { InferenceClient } from '../inference/inference-client';
import type { Recording } from '../recording/recording';
import type { FrameSource } from '../sources/frame-source';
import type { KnobStore } from './knob-store';
import type { Playback, PlaybackEnd } from './playback';
import type { OpenedSource } from './session-states';

/** Where a live stream's frames and failures go: the stream.update event, the background error. */
export interface LiveStreamSinks {
  onUpdate: ConstructorParameters<typeof LivePipeline>[0]['onUpdate'];
  onError: (error: KnobErrorPayload) => void;
}

/** The live pipeline that fills `recording` from `source` at the current knobs (live-pipeline.ts). */
export function livePipelineFor(
  model: InferenceClient,
  source: OpenedSource,
  recording: Recording,
  knobs: KnobStore,
  sinks: LiveStreamSinks,
): LivePipeline {
  return new LivePipeline({
    client: model,
    recording,
    settings: knobs.current.gate,
    settingsVersion: knobs.current.version,
    calibrator: knobs.calibrator,
    schedule: source.schedule,
    streamSeed: source.seed,
    ...sinks,
  });
}

/**
 * Plays a file source into the pipeline in real time. A file never drops a frame: playback waits
 * for the pipeline to take each one. Resolves with how playback ended.
 */
export function playInto(playback: Playback, frames: FrameSource, pipeline: LivePipeline): Promise<PlaybackEnd> {
  return playback.start(frames, async (frame) => {
    await pipeline.whenAccepting();
    pipeline.submit(frame.pixels, frames.info, frame.timestampSeconds, frame.label, frame.sourceFrame);
  });
}
