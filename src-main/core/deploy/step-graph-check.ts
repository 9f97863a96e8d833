import * as ort from 'onnxruntime-node';
import {
  calibrateLogits,
  needsFeatures,
  type AnyCalibratorSpec,
} from '../../../src-shared/calibrators/output-calibrator';
import type { InputSpec } from '../../../src-shared/frames/input-spec';
import { fuseRowInto } from '../../../src-shared/fusion/convex-fusion';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import { runGate } from '../../../src-shared/gate/gate-kernel';
import { createGateState } from '../../../src-shared/gate/gate-state';
import type { LoadedModel } from '../inference/loaded-model';
import { CONDITION_STATE } from './condition-state-graph';
import { STEP_INPUTS, STEP_OUTPUTS } from './step-graph';

/**
 * The step graph against the app, frame by frame (issue 15's equivalence): the same 8-bit frames
 * through the app's model loader, gate kernel, fusion and calibrator, and through the step graph in
 * onnxruntime-node one frame per call with the state carried between calls. `knob verify` runs it
 * on a few frames of every bundle; the tests on whole streams.
 */
export interface CheckFrames {
  /** count x H x W x C bytes at the model's input size. */
  frames: Uint8Array;
  count: number;
  timestampsSeconds: Float64Array;
  /** The first frame's interval (the stream's nominal one). */
  nominalDtSeconds: number;
}

export interface Readout {
  /** g clamped to [0, 1]: the fusion weight of each frame. */
  gate: Float64Array;
  /** u* clamped to [0, 1]. */
  uStar: Float64Array;
  /** Fused probabilities after the calibrator, count x K. */
  probabilities: Float64Array;
}

const clamp01 = (x: number) => (x < 0 ? 0 : x > 1 ? 1 : x);

/** What the app shows for each frame. */
export async function appReadout(
  model: LoadedModel,
  input: CheckFrames,
  settings: GateSettings,
  calibrator: AnyCalibratorSpec | null,
): Promise<Readout> {
  const { count } = input;
  const k = model.description.classCount;
  const withFeatures = calibrator !== null && needsFeatures(calibrator.method);
  const branches = await model.run(input.frames, count, 0, withFeatures);
  const g = new Float64Array(count);
  runGate(
    settings,
    { uRef: branches.uRef, timestampsSeconds: input.timestampsSeconds, nominalDtSeconds: input.nominalDtSeconds },
    0,
    count,
    createGateState(settings.g0),
    { g, v: new Float64Array(count) },
  );
  const fused = new Float64Array(count * k);
  for (let i = 0; i < count; i++) fuseRowInto(branches.zStatic, branches.zDyn, i * k, k, g[i]!, fused, i * k);
  const features =
    branches.features === null ? null : { width: branches.features.length / count, values: branches.features };
  // the frames are one stream in continuous mode: a condition-aware calibrator's hysteresis runs over them
  const rows = settings.mode === 'continuous' ? 'one stream' : 'each alone';
  const identity = { method: 'temperature', temperature: 1 } as const;
  const logProbabilities = calibrateLogits(calibrator ?? identity, fused, k, features, rows);
  return {
    gate: g.map(clamp01),
    uStar: Float64Array.from(branches.uRef, clamp01),
    probabilities: logProbabilities.map(Math.exp),
  };
}

/**
 * What the readout needs of an onnxruntime JavaScript API: onnxruntime-node's (the default), or
 * onnxruntime-web's, which the tests pass to show the graph runs there unchanged.
 */
export interface OnnxRuntimeApi {
  InferenceSession: Pick<typeof ort.InferenceSession, 'create'>;
  Tensor: typeof ort.Tensor;
}

/** The step graph over the frames, one frame per call, the state carried between calls. */
export async function stepGraphReadout(
  graph: Uint8Array,
  input: CheckFrames,
  spec: InputSpec,
  settings: GateSettings,
  classCount: number,
  runtime: OnnxRuntimeApi = ort,
): Promise<Readout> {
  const session = await runtime.InferenceSession.create(graph);
  try {
    const { count } = input;
    const frameBytes = spec.width * spec.height * spec.channels;
    const shape = [1, spec.height, spec.width, spec.channels];
    const out: Readout = {
      gate: new Float64Array(count),
      uStar: new Float64Array(count),
      probabilities: new Float64Array(count * classCount),
    };
    let state = { g: settings.g0, v: 0, uPrev: settings.g0 };
    // a condition-aware calibrator's hysteresis state, where the graph carries it
    const conditionState = CONDITION_STATE.filter((s) => session.inputNames.includes(s.input));
    let condition = conditionState.map((s) => s.initial as number);
    const scalar = (x: number) => new runtime.Tensor('float64', Float64Array.of(x), [1, 1]);
    for (let i = 0; i < count; i++) {
      const feeds: Record<string, ort.Tensor> = {
        [STEP_INPUTS.frames]: new runtime.Tensor(
          'uint8',
          input.frames.subarray(i * frameBytes, (i + 1) * frameBytes),
          shape,
        ),
      };
      if (settings.mode === 'continuous') {
        const dt = i === 0 ? input.nominalDtSeconds : input.timestampsSeconds[i]! - input.timestampsSeconds[i - 1]!;
        feeds[STEP_INPUTS.g] = scalar(state.g);
        feeds[STEP_INPUTS.v] = scalar(state.v);
        feeds[STEP_INPUTS.uPrev] = scalar(state.uPrev);
        feeds[STEP_INPUTS.dt] = scalar(dt);
      }
      conditionState.forEach((s, j) => (feeds[s.input] = scalar(condition[j]!)));
      const result = await session.run(feeds);
      const first = (name: string) => (result[name]!.data as Float32Array | Float64Array)[0]!;
      out.gate[i] = first(STEP_OUTPUTS.gate);
      out.uStar[i] = first(STEP_OUTPUTS.uStar);
      out.probabilities.set(result[STEP_OUTPUTS.probabilities]!.data as Float32Array, i * classCount);
      if (settings.mode === 'continuous')
        state = { g: first(STEP_OUTPUTS.gNext), v: first(STEP_OUTPUTS.vNext), uPrev: first(STEP_OUTPUTS.uPrevNext) };
      condition = conditionState.map((s) => first(s.output));
    }
    return out;
  } finally {
    await session.release();
  }
}

/** The largest absolute difference of each readout between the two. */
export function readoutDifferences(a: Readout, b: Readout): { gate: number; uStar: number; probabilities: number } {
  const worst = (x: Float64Array, y: Float64Array) => x.reduce((m, v, i) => Math.max(m, Math.abs(v - y[i]!)), 0);
  return {
    gate: worst(a.gate, b.gate),
    uStar: worst(a.uStar, b.uStar),
    probabilities: worst(a.probabilities, b.probabilities),
  };
}

/** The tolerance of the equivalence (issue 15): the app's and the step graph's readouts differ by less. */
export const EQUIVALENCE_TOLERANCE = 1e-5;
