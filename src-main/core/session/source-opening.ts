import type { ApiParsedParams } from '../../../src-shared/api/contract';
import type { SourceInfo } from '../../../src-shared/api/session-state';
import { checkScheduleForChannels } from '../../../src-shared/corruptions';
import { KnobError } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { CallContext } from '../calls/call-context';
import type { InferenceClient } from '../inference/inference-client';
import { openSourceFor } from '../sources/open-source';
import type { RunOfflineInput } from '../use-cases/run-offline';
import type { OpenedSource } from './session-states';

/**
 * What source.open opens for the loaded model, checked before anything is torn down: the request's
 * combinations, the schedule against the model's channels, features only from a model that has
 * them; a file source opened (decoded to the model's input), a camera described until it captures.
 */
export async function openedSource(
  model: InferenceClient,
  params: ApiParsedParams<'source.open'>,
  call: CallContext,
): Promise<OpenedSource> {
  const schedule = params.schedule ?? { kind: 'none' as const };
  const featureWidth = params.recordFeatures === true ? model.description.featureCount : null;
  if (params.recordFeatures === true && featureWidth === null)
    throw new KnobError(
      'INVALID_INPUT',
      `recordFeatures: ${model.description.paths[0]} has no 'features' output to record`,
    );
  const input = model.description.input;
  checkScheduleForChannels(schedule, input.channels);
  if (params.camera !== undefined && params.kind !== 'camera')
    throw new KnobError('BAD_REQUEST', 'camera: only a camera source takes a device description');
  if (params.kind === 'camera' && params.path !== undefined)
    throw new KnobError('BAD_REQUEST', 'a camera source takes no path');
  const { kind } = params;
  const frames = kind === 'camera' ? null : await openSourceFor(model.description, { ...params, kind }, call);
  const info = frames?.info ?? cameraSourceInfo(input, params.frameRateHz ?? 30, params.camera);
  return { info, frames, schedule, seed: params.seed ?? 0, featureWidth };
}

/** What a camera source is before its first frame: the model's input size, frames pushed by the renderer. */
export function cameraSourceInfo(
  input: { width: number; height: number; channels: 1 | 3 },
  frameRateHz: number,
  camera: { deviceLabel: string; width: number; height: number } | undefined,
): SourceInfo {
  return {
    kind: 'camera',
    path: null,
    description: 'camera frames pushed by the renderer',
    frameCount: null,
    width: input.width,
    height: input.height,
    channels: input.channels,
    frameRateHz,
    hasLabels: false,
    labelNames: null,
    timestampSource: 'capture',
    identity: camera === undefined ? null : { kind: 'camera', ...camera },
    classMapping: null,
  };
}

/** What an offline run of the open file source is: its schedule and seed, features when it records them. */
export function offlineRunOf(
  model: InferenceClient,
  source: OpenedSource,
  settings: GateSettings,
  maxFrames: number | undefined,
): RunOfflineInput {
  const frames = source.frames!;
  const { schedule, seed: streamSeed } = source;
  return {
    model,
    source: frames,
    schedule,
    streamSeed,
    settings,
    maxFrames,
    recordFeatures: source.featureWidth !== null,
  };
}
