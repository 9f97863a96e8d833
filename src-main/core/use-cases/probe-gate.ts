import { checkScheduleForChannels, type CorruptionName } from '../../../src-shared/corruptions';
import { KnobError } from '../../../src-shared/errors';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import {
  describeFrequencyProbePlan,
  describeStepProbePlan,
  frequencyProbeAt,
  parseFrequencyProbePlan,
  parseStepProbePlan,
  stepProbeAt,
  type FrequencyProbePlan,
  type FrequencyProbeResult,
  type StepProbePlan,
  type StepProbeResult,
} from '../../../src-shared/probes';
import type { Trace } from '../../../src-shared/trace/trace';
import type { CallContext } from '../calls/call-context';
import type { InferenceClient } from '../inference/inference-client';
import { recordFrequencyProbe, recordStepProbe, type ProbeRecordingOptions } from '../probes/probe-recording';
import type { FrameSource } from '../sources/frame-source';
import { sourceName } from '../sources/source-name';

/** A probe of the gate: its plan, how its streams are recorded through the model, and its replay. */
export interface GateProbe<Plan, Result> {
  /** The probe in words ("step probe"). */
  what: string;
  /** The plan of a request (any fields but the frame rate) at the source's frame rate, checked. */
  plan: (request: object, frameRateHz: number) => Plan;
  corruption: (plan: Plan) => CorruptionName;
  recordStreams: (plan: Plan, options: ProbeRecordingOptions) => Promise<Trace[]>;
  describe: (plan: Plan) => string;
  /** The probe at `settings`: a replay of the recorded streams, no model pass. */
  at: (traces: Trace[], plan: Plan, settings: GateSettings) => Result;
}

export const STEP_PROBE: GateProbe<StepProbePlan, StepProbeResult> = {
  what: 'step probe',
  plan: (request, frameRateHz) => parseStepProbePlan({ ...request, frameRateHz }),
  corruption: (plan) => plan.corruption,
  recordStreams: recordStepProbe,
  describe: describeStepProbePlan,
  at: stepProbeAt,
};

export const FREQUENCY_PROBE: GateProbe<FrequencyProbePlan, FrequencyProbeResult> = {
  what: 'frequency probe',
  plan: (request, frameRateHz) => parseFrequencyProbePlan({ ...request, frameRateHz }),
  corruption: (plan) => plan.corruption,
  recordStreams: recordFrequencyProbe,
  describe: describeFrequencyProbePlan,
  at: frequencyProbeAt,
};

/** A probe's streams as recorded through the model once. */
export interface RecordedProbe<Plan> {
  plan: Plan;
  traces: Trace[];
  /** The plan and the source in words. */
  description: string;
  recordMs: number;
}

export interface RecordProbeInput {
  model: InferenceClient;
  /** A file source (its frame count and rate known); the probe plays stretches of it. */
  source: FrameSource;
  /** The probe's parameters but the frame rate, which is the source's. */
  request: object;
  batchSize?: number;
}

/**
 * A probe's streams recorded through the model (probe-recording.ts), the desk's probe.step and
 * probe.frequency and `knob probe` alike: planned at the source's frame rate, its corruption
 * checked against the model's input channels before the first pass, progress reported per stream
 * under `<probe>: recording through the model`, and cancelling the call stops it with CANCELLED.
 */
export async function recordGateProbe<Plan>(
  probe: GateProbe<Plan, unknown>,
  input: RecordProbeInput,
  call: CallContext,
): Promise<RecordedProbe<Plan>> {
  const { model, source } = input;
  const plan = probe.plan(input.request, source.info.frameRateHz);
  const constant = { kind: 'constant' as const, corruption: probe.corruption(plan), severity: 1 };
  checkScheduleForChannels(constant, model.description.input.channels);
  const task = `${probe.what}: recording through the model`;
  const started = performance.now();
  try {
    const traces = await probe.recordStreams(plan, {
      client: model,
      source,
      batchSize: input.batchSize,
      signal: call.signal,
      onProgress: (done, total) => call.progress(task, done, total),
    });
    const description = `${probe.describe(plan)} over ${sourceName(source.info)}`;
    return { plan, traces, description, recordMs: performance.now() - started };
  } catch (error) {
    if (call.signal.aborted) throw new KnobError('CANCELLED', `the ${probe.what} was cancelled`);
    throw error;
  }
}

/** A recorded probe at `settings`, with the time the replay took. */
export function gateProbeAt<Plan, Result>(
  probe: GateProbe<Plan, Result>,
  recorded: RecordedProbe<Plan>,
  settings: GateSettings,
): { result: Result; replayMs: number } {
  const started = performance.now();
  const result = probe.at(recorded.traces, recorded.plan, settings);
  return { result, replayMs: performance.now() - started };
}
