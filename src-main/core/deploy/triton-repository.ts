import type { AnyCalibratorSpec } from '../../../src-shared/calibrators/output-calibrator';
import type { GateSettings } from '../../../src-shared/gate/gate-settings';
import type { InputSpec } from '../../../src-shared/frames/input-spec';
import { CONDITION_STATE, carriesConditionState } from './condition-state-graph';
import { STEP_INPUTS, STEP_OUTPUTS, STEP_STATE } from './step-graph';

/**
 * A Triton Inference Server model repository for the step graph (issue 15): the ONNX Runtime
 * backend; in continuous mode the sequence batcher keeps each stream's gate state as implicit
 * state (g, v, u_prev, initialised from files at g0, 0, g0 at every sequence start, so a new
 * correlation id is a stream at rest) and batches the next frames of many streams together
 * (the "oldest" strategy: dynamic batching across sequences); one instance per GPU.
 * Reset mode needs no state: plain dynamic batching.
 *
 * Field names and numbers follow Triton's model configuration schema (common/protobuf/
 * model_config.proto, as of 2025; see Triton's "Model Configuration" and "Stateful Models"
 * guides); tests/fixtures/reference/triton holds the subset used, which the tests parse the
 * generated config.pbtxt against with protoc.
 *
 *   <repository>/<name>/config.pbtxt
 *   <repository>/<name>/1/model.onnx
 *   <repository>/<name>/initial_state/{g0,v0,u_prev0}.bin   (float64, row-major)
 *
 * A condition-aware calibrator with a hysteresis adds its state (condition-state-graph.ts) beside
 * the gate's, initialised from condition0.bin and condition_run0.bin.
 */
export interface TritonRepositoryOptions {
  modelName: string;
  input: InputSpec;
  classCount: number;
  gate: GateSettings;
  /** The step graph's calibrator: a condition-aware one with a hysteresis carries state too. */
  calibrator?: AnyCalibratorSpec | null;
  /** Largest batch the server forms (streams served at once per instance). */
  maxBatchSize?: number;
  /** How long the batcher waits to fill a batch, in microseconds. */
  maxQueueDelayMicroseconds?: number;
  /** A stream idle this long is dropped and its state freed. */
  maxSequenceIdleMicroseconds?: number;
}

export interface RepositoryFile {
  path: string;
  bytes: Uint8Array;
}

const STATE_FILES: Record<string, string> = {
  [STEP_INPUTS.g]: 'g0.bin',
  [STEP_INPUTS.v]: 'v0.bin',
  [STEP_INPUTS.uPrev]: 'u_prev0.bin',
  ...Object.fromEntries(CONDITION_STATE.map((s) => [s.input, `${s.input}0.bin`])),
};

/** The (input, output) pairs of the graph's implicit state, each with its value at a sequence start. */
function stateOf(options: TritonRepositoryOptions): Array<{ input: string; output: string; initial: number }> {
  const { gate } = options;
  if (gate.mode !== 'continuous') return [];
  const initial: Record<string, number> = {
    [STEP_INPUTS.g]: gate.g0,
    [STEP_INPUTS.v]: 0,
    [STEP_INPUTS.uPrev]: gate.g0,
  };
  return [
    ...STEP_STATE.map((s) => ({ ...s, initial: initial[s.input]! })),
    ...(carriesConditionState(options.calibrator ?? null, gate.mode) ? CONDITION_STATE : []),
  ];
}

/** The repository's files (paths relative to the repository root), given the step graph's bytes. */
export function tritonRepository(options: TritonRepositoryOptions, stepGraph: Uint8Array): RepositoryFile[] {
  const { modelName } = options;
  const encoder = new TextEncoder();
  const float64 = (value: number) => new Uint8Array(Float64Array.of(value).buffer);
  return [
    { path: `${modelName}/config.pbtxt`, bytes: encoder.encode(tritonConfigText(options)) },
    { path: `${modelName}/1/model.onnx`, bytes: stepGraph },
    ...stateOf(options).map((s) => ({
      path: `${modelName}/initial_state/${STATE_FILES[s.input]}`,
      bytes: float64(s.initial),
    })),
  ];
}

/** config.pbtxt in protobuf text format. */
export function tritonConfigText(options: TritonRepositoryOptions): string {
  const { input, classCount: k, gate } = options;
  const continuous = gate.mode === 'continuous';
  const maxBatch = options.maxBatchSize ?? 64;
  const delay = options.maxQueueDelayMicroseconds ?? 500;
  const tensor = (name: string, type: string, dims: number[]) =>
    `  {\n    name: "${name}"\n    data_type: ${type}\n    dims: [ ${dims.join(', ')} ]\n  }`;
  const inputs = [
    tensor(STEP_INPUTS.frames, 'TYPE_UINT8', [input.height, input.width, input.channels]),
    ...(continuous ? [tensor(STEP_INPUTS.dt, 'TYPE_FP64', [1])] : []),
  ];
  const outputs = [
    tensor(STEP_OUTPUTS.probabilities, 'TYPE_FP32', [k]),
    tensor(STEP_OUTPUTS.logits, 'TYPE_FP32', [k]),
    tensor(STEP_OUTPUTS.uStar, 'TYPE_FP32', [1]),
    tensor(STEP_OUTPUTS.gate, 'TYPE_FP32', [1]),
  ];
  const lines = [
    `name: "${options.modelName}"`,
    'backend: "onnxruntime"',
    `max_batch_size: ${maxBatch}`,
    `input [\n${inputs.join(',\n')}\n]`,
    `output [\n${outputs.join(',\n')}\n]`,
    'instance_group [\n  {\n    kind: KIND_GPU\n    count: 1\n  }\n]',
  ];
  if (!continuous) {
    lines.push(`dynamic_batching {\n  max_queue_delay_microseconds: ${delay}\n}`);
  } else {
    const states = stateOf(options).map(
      (s) =>
        `    {\n      input_name: "${s.input}"\n      output_name: "${s.output}"\n      data_type: TYPE_FP64\n      dims: [ 1 ]\n` +
        `      initial_state: {\n        data_type: TYPE_FP64\n        dims: [ 1 ]\n        data_file: "${STATE_FILES[s.input]}"\n        name: "${s.input} at rest"\n      }\n    }`,
    );
    lines.push(
      'sequence_batching {\n' +
        `  max_sequence_idle_microseconds: ${options.maxSequenceIdleMicroseconds ?? 5_000_000}\n` +
        `  oldest {\n    max_candidate_sequences: ${maxBatch * 4}\n    preferred_batch_size: [ ${maxBatch} ]\n` +
        `    max_queue_delay_microseconds: ${delay}\n  }\n` +
        `  state [\n${states.join(',\n')}\n  ]\n}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
