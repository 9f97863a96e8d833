import type { InputSpec } from '../../../src-shared/frames/input-spec';
import { GATE_VARIANT_LABELS, type GateSettings } from '../../../src-shared/gate/gate-settings';
import type { AnyCalibratorSpec } from '../../../src-shared/calibrators/output-calibrator';
import { CONDITION_STATE, carriesConditionState } from '../deploy/condition-state-graph';
import { STEP_INPUTS, STEP_OUTPUTS } from '../deploy/step-graph';

/** deploy/README.md of a bundle: how to run the step graph and the Triton repository it holds. */
export function deployReadme(options: {
  name: string;
  gate: GateSettings;
  input: InputSpec;
  classCount: number;
  frameRateHz: number;
  stepGraph: boolean;
  /** The bundle's calibrator: a condition-aware one with a hysteresis adds state (condition-state-graph.ts). */
  calibrator?: AnyCalibratorSpec | null;
}): string {
  const { name, gate, input, classCount: k, frameRateHz } = options;
  const continuous = gate.mode === 'continuous';
  const conditionState = carriesConditionState(options.calibrator ?? null, gate.mode) ? CONDITION_STATE : [];
  const conditionText =
    conditionState.length === 0
      ? ''
      : `The condition-aware calibrator's hysteresis carries state too, fed back the same way
(${conditionState.map((s) => `\`${s.output}\` -> \`${s.input}\``).join(', ')}, float64 [N, 1]); a stream starts at
${conditionState.map((s) => `${s.input} = ${s.initial}`).join(', ')}.
`;
  const conditionFeeds = conditionState.map((s) => `, "${s.input}": np.full((1, 1), ${s.initial}.0)`).join('');
  const conditionCarried = conditionState.map((s) => `, "${s.input}": out["${s.output}"]`).join('');
  const shape = `[N, ${input.height}, ${input.width}, ${input.channels}]`;
  const setting = `${GATE_VARIANT_LABELS[gate.variant]}, ${gate.discretization}, zeta ${gate.zeta}, wn ${gate.wnRadPerSec} rad/s, ${gate.mode} mode`;
  if (!options.stepGraph)
    return `# ${name}: deployment\n\nThis bundle has no step graph (see \`deploy.stepGraphNote\` in manifest.json); run it with Knob Studio.\n`;
  const state = continuous
    ? `
The gate carries state from frame to frame, one state per stream: feed each output back as the
next call's input (\`${STEP_OUTPUTS.gNext}\` -> \`${STEP_INPUTS.g}\`, \`${STEP_OUTPUTS.vNext}\` -> \`${STEP_INPUTS.v}\`,
\`${STEP_OUTPUTS.uPrevNext}\` -> \`${STEP_INPUTS.uPrev}\`), all float64 [N, 1]. A stream starts at rest:
g = ${gate.g0}, v = 0, u_prev = ${gate.g0}, with dt = ${(1 / frameRateHz).toPrecision(6)} s (the nominal interval at
${frameRateHz.toPrecision(4)} fps). \`${STEP_INPUTS.dt}\` is each frame's interval since the previous one in
seconds: irregular intervals are handled as the app handles them (coefficients from dt).
${conditionText}`
    : `
Reset mode: every frame is judged on its own (the gate's reading after tau = ${gate.tauSeconds} s from
rest at g0 = ${gate.g0}); no state, no dt.
`;
  const feeds = continuous
    ? `state = {"${STEP_INPUTS.g}": np.full((1, 1), ${gate.g0}), "${STEP_INPUTS.v}": np.zeros((1, 1)), "${STEP_INPUTS.uPrev}": np.full((1, 1), ${gate.g0})${conditionFeeds}}
dt = np.full((1, 1), ${(1 / frameRateHz).toPrecision(6)})
for frame in frames:  # uint8 ${shape.replace('N', '1')}, row-major pixels
    out = dict(zip(names, session.run(names, {"${STEP_INPUTS.frames}": frame, **state, "${STEP_INPUTS.dt}": dt})))
    state = {"${STEP_INPUTS.g}": out["${STEP_OUTPUTS.gNext}"], "${STEP_INPUTS.v}": out["${STEP_OUTPUTS.vNext}"], "${STEP_INPUTS.uPrev}": out["${STEP_OUTPUTS.uPrevNext}"]${conditionCarried}}
    print(out["${STEP_OUTPUTS.probabilities}"].argmax(), out["${STEP_OUTPUTS.gate}"])`
    : `for frame in frames:  # uint8 ${shape.replace('N', '1')}, row-major pixels
    out = dict(zip(names, session.run(names, {"${STEP_INPUTS.frames}": frame})))
    print(out["${STEP_OUTPUTS.probabilities}"].argmax(), out["${STEP_OUTPUTS.gate}"])`;
  const tritonInputs = continuous
    ? `{"name": "${STEP_INPUTS.frames}", "datatype": "UINT8", "shape": [1, ${input.height}, ${input.width}, ${input.channels}], "data": [...]},
    {"name": "${STEP_INPUTS.dt}", "datatype": "FP64", "shape": [1, 1], "data": [${(1 / frameRateHz).toPrecision(6)}]}`
    : `{"name": "${STEP_INPUTS.frames}", "datatype": "UINT8", "shape": [1, ${input.height}, ${input.width}, ${input.channels}], "data": [...]}`;
  return `# ${name}: deployment

Tuned setting: ${setting}. Everything the app applies is inside \`step.onnx\` as constants: the
input's preprocessing, the model contract, the gate, the fusion and the calibrator. Standard ONNX
operators only: it runs in onnxruntime (Node, web, Python) and in Triton's ONNX Runtime backend.

## The step graph: deploy/step.onnx

Inputs: \`${STEP_INPUTS.frames}\` uint8 ${shape} (8-bit pixels, height x width x channels, as a camera
gives them)${continuous ? `; \`${STEP_INPUTS.g}\`, \`${STEP_INPUTS.v}\`, \`${STEP_INPUTS.uPrev}\`, \`${STEP_INPUTS.dt}\`${conditionState.map((s) => `, \`${s.input}\``).join('')} float64 [N, 1]` : ''}.
Outputs: \`${STEP_OUTPUTS.probabilities}\` float32 [N, ${k}] (after the calibrator), \`${STEP_OUTPUTS.logits}\` float32
[N, ${k}] (fused, before it), \`${STEP_OUTPUTS.uStar}\` and \`${STEP_OUTPUTS.gate}\` float32 [N, 1]${
    continuous
      ? `, and the next
state \`${STEP_OUTPUTS.gNext}\`, \`${STEP_OUTPUTS.vNext}\`, \`${STEP_OUTPUTS.uPrevNext}\`${conditionState.map((s) => `, \`${s.output}\``).join('')} float64 [N, 1]`
      : ''
  }. Each of the N rows is one
stream's next frame.
${state}
Python (onnxruntime):

\`\`\`python
import numpy as np, onnxruntime as ort
session = ort.InferenceSession("deploy/step.onnx")
names = [o.name for o in session.get_outputs()]
${feeds}
\`\`\`

Reference consumers in the Knob Studio repository load a bundle, check every member's SHA-256
and run this graph: \`examples/deploy/node\` (onnxruntime-node, over a folder of images or a
video's frames) and \`examples/deploy/python/run_step_graph.py\` (onnxruntime, over frames in a
.npy file). In a browser, onnxruntime-web runs the same file.

## Triton Inference Server: deploy/triton

\`deploy/triton\` is a model repository: \`${name}/config.pbtxt\`, \`${name}/1/model.onnx\`${
    continuous
      ? ` and the
initial state files \`${name}/initial_state/*.bin\``
      : ''
  }. ${
    continuous
      ? `The sequence batcher keeps each stream's gate state on the
server (implicit state, reset to rest at every sequence start) and batches the next frames of many
streams together; one instance runs on each GPU. A stream is a sequence id: send its frames in order
with the same id, \`sequence_start\` on the first and \`sequence_end\` on the last.`
      : 'Dynamic batching forms batches across requests; one instance runs on each GPU.'
  }

\`\`\`sh
docker run --gpus all --rm -p 8000:8000 -p 8001:8001 -v "$PWD/deploy/triton:/models" \\
  nvcr.io/nvidia/tritonserver:25.01-py3 tritonserver --model-repository=/models
\`\`\`

A request over HTTP (KServe v2 protocol):

\`\`\`sh
curl -s localhost:8000/v2/models/${name}/infer -d '{
  ${continuous ? '"parameters": {"sequence_id": 42, "sequence_start": true},\n  ' : ''}"inputs": [
    ${tritonInputs}
  ]
}'
\`\`\`

Triton requires the batch dimension: send one frame as [1, ...]. The server's batches combine
frames of different streams.
`;
}
