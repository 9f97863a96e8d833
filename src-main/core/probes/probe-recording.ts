import { KnobError } from '../../../src-shared/errors';
import type { CorruptionSchedule } from '../../../src-shared/corruptions/schedule';
import { DEFAULT_GATE_SETTINGS } from '../../../src-shared/gate/gate-settings';
import {
  frequencyProbeStream,
  probePeriodsFrames,
  realisationSeed,
  stepProbeFrames,
  stepProbeOffsets,
  stepProbeSchedule,
  type FrequencyProbePlan,
  type StepProbePlan,
} from '../../../src-shared/probes';
import { seededRandom } from '../../../src-shared/random';
import type { Trace } from '../../../src-shared/trace/trace';
import { runOffline } from '../engine/offline-run';
import { batchFramesFor } from '../inference/batch-size';
import type { InferenceClient } from '../inference/inference-client';
import type { FrameSource } from '../sources/frame-source';
import { sourceName } from '../sources/source-name';

/**
 * Records a probe's streams through the model, once: each is an offline run (offline-run.ts) of a
 * stretch of the source under the probe's schedule. The traces hold what the model said; the
 * probe at any knobs is then a replay (src-shared/probes), so no knob change runs the model again.
 */
export interface ProbeRecordingOptions {
  client: InferenceClient;
  source: FrameSource;
  batchSize?: number;
  /** Frames recorded so far, of all streams; `label` names the stream. */
  onProgress?: (framesDone: number, framesTotal: number, label: string) => void;
  signal?: AbortSignal;
}

interface ProbeStream {
  schedule: CorruptionSchedule;
  fromFrame: number;
  frames: number;
  seed: number;
  label: string;
}

function sourceFramesFor(source: FrameSource, frameRateHz: number): number {
  if (source.info.frameCount === null)
    throw new KnobError(
      'INVALID_INPUT',
      `${sourceName(source.info)}: a probe needs a source whose length is known (not a camera; a video whose ` +
        `container does not state its frame count can be remuxed to .mp4 or .avi)`,
    );
  if (Math.abs(source.info.frameRateHz - frameRateHz) > 1e-9 * frameRateHz)
    throw new KnobError(
      'INVALID_INPUT',
      `${sourceName(source.info)} plays at ${source.info.frameRateHz} fps; the probe was planned at ${frameRateHz} fps`,
    );
  return source.info.frameCount;
}

async function recordStreams(streams: ProbeStream[], options: ProbeRecordingOptions): Promise<Trace[]> {
  const total = streams.reduce((sum, s) => sum + s.frames, 0);
  const traces: Trace[] = [];
  let done = 0;
  for (const stream of streams) {
    if (options.signal?.aborted) throw new KnobError('CANCELLED', 'probe cancelled');
    const result = await runOffline({
      client: options.client,
      source: options.source,
      schedule: stream.schedule,
      streamSeed: stream.seed,
      // the recording's own settings do not matter: the probe replays the trace at the knobs asked
      settings: DEFAULT_GATE_SETTINGS,
      batchSize: options.batchSize ?? batchFramesFor(options.client.description.input).frames,
      maxFrames: stream.frames,
      fromFrame: stream.fromFrame,
      signal: options.signal,
      onProgress: (framesDone) => options.onProgress?.(done + framesDone, total, stream.label),
    });
    if (result.error !== null) throw new KnobError(result.error.code, `${stream.label}: ${result.error.message}`);
    if (result.trace.frameCount !== stream.frames)
      throw new KnobError(
        'INVALID_INPUT',
        `${stream.label}: the source gave ${result.trace.frameCount} of ${stream.frames} frames`,
      );
    traces.push(result.trace);
    done += stream.frames;
  }
  return traces;
}

/** The step probe's R realisations (stepProbeOffsets, realisationSeed). */
export async function recordStepProbe(plan: StepProbePlan, options: ProbeRecordingOptions): Promise<Trace[]> {
  const sourceFrames = sourceFramesFor(options.source, plan.frameRateHz);
  const schedule = stepProbeSchedule(plan);
  const frames = stepProbeFrames(plan);
  return recordStreams(
    stepProbeOffsets(plan, sourceFrames).map((fromFrame, r) => ({
      schedule,
      fromFrame,
      frames,
      seed: realisationSeed(plan.seed, r),
      label: `realisation ${r + 1} of ${plan.realisations}`,
    })),
    options,
  );
}

/** The frequency probe's streams, one per test frequency (probePeriodsFrames order). */
export async function recordFrequencyProbe(plan: FrequencyProbePlan, options: ProbeRecordingOptions): Promise<Trace[]> {
  const sourceFrames = sourceFramesFor(options.source, plan.frameRateHz);
  const random = seededRandom(plan.seed ^ 0xf4e9);
  return recordStreams(
    probePeriodsFrames(plan).map((periodFrames, i) => {
      const { schedule, frames } = frequencyProbeStream(plan, periodFrames);
      if (sourceFrames < frames)
        throw new KnobError(
          'INVALID_INPUT',
          `the frequency probe needs ${frames} frames at ${periodFrames} frames a period; the source has ${sourceFrames}`,
        );
      return {
        schedule,
        fromFrame: Math.floor(random() * (sourceFrames - frames + 1)),
        frames,
        seed: realisationSeed(plan.seed, i),
        label: `${(plan.frameRateHz / periodFrames).toPrecision(3)} Hz`,
      };
    }),
    options,
  );
}
