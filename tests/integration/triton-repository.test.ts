/**
 * The Triton model repository of the step graph (src-main/core/deploy/triton-repository.ts):
 * config.pbtxt parses as protobuf text format against Triton's model configuration schema (the
 * subset in tests/fixtures/reference/triton, with protoc, which rejects unknown fields and wrong
 * types), and names exactly the step graph's inputs, outputs and state tensors with their types
 * and shapes; the initial-state files hold g0, 0 and g0 as float64.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fromBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema, TensorProto_DataType } from 'onnx-buf';
import { describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../src-shared/gate';
import { buildStepGraph } from '../../src-main/core/deploy/step-graph';
import { tritonConfigText, tritonRepository } from '../../src-main/core/deploy/triton-repository';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { GREY_28X28_INPUT } from '../support/onnx-builder';
import { ModelOptionsSchema } from '../../src-shared/api/model-options';
import { CalibratorSpecSchema, type CalibratorSpec } from '../../src-shared/calibrators/output-calibrator';
import { loadModel } from '../../src-main/core/inference/loaded-model';

const SCHEMA_DIR = fileURLToPath(new URL('../fixtures/reference/triton', import.meta.url));
const protoc = spawnSync('protoc', ['--version'], { encoding: 'utf8' });
const haveProtoc = protoc.status === 0;
if (!haveProtoc)
  process.stdout.write(
    'triton-repository: protoc not found (Debian: protobuf-compiler); the text-format parse is skipped\n',
  );

/** protoc's canonical text of the config (it parses, then prints every field it understood). */
function parsedByProtoc(text: string): string {
  const encoded = spawnSync(
    'protoc',
    [`--proto_path=${SCHEMA_DIR}`, '--encode=inference.ModelConfig', 'model_config_subset.proto'],
    { input: text },
  );
  if (encoded.status !== 0) throw new Error(`protoc refused the config:\n${encoded.stderr.toString()}`);
  const decoded = spawnSync(
    'protoc',
    [`--proto_path=${SCHEMA_DIR}`, '--decode=inference.ModelConfig', 'model_config_subset.proto'],
    { input: encoded.stdout },
  );
  return decoded.stdout.toString();
}

const ONNX_TO_TRITON: Partial<Record<TensorProto_DataType, string>> = {
  [TensorProto_DataType.UINT8]: 'TYPE_UINT8',
  [TensorProto_DataType.FLOAT]: 'TYPE_FP32',
  [TensorProto_DataType.DOUBLE]: 'TYPE_FP64',
};

function stepGraphFor(gate: GateSettings, calibrator: CalibratorSpec | null = null) {
  const bytes = buildStepGraph({
    model: readFileSync(DEFAULT_MODEL_PATH),
    contract: 'knob-native',
    adapter: null,
    input: GREY_28X28_INPUT,
    gate,
    calibrator,
    classCount: 10,
  });
  const graph = fromBinary(ModelProtoSchema, bytes).graph!;
  const describe = (v: (typeof graph.input)[number]) => {
    const t = v.type!.value.value as {
      elemType: TensorProto_DataType;
      shape: { dim: Array<{ value: { value: unknown } }> };
    };
    return {
      name: v.name,
      type: ONNX_TO_TRITON[t.elemType],
      dims: t.shape.dim.slice(1).map((d) => Number(d.value.value)),
    };
  };
  return { bytes, inputs: graph.input.map(describe), outputs: graph.output.map(describe) };
}

/** The tensors a parsed config names: its inputs, outputs and state pairs, with types and dims. */
function tensorsOf(canonical: string) {
  const blocks = (key: string) =>
    [...canonical.matchAll(new RegExp(`^${key} \\{\\n([\\s\\S]*?)^\\}`, 'gm'))].map((m) => m[1]!);
  const field = (block: string, name: string) => new RegExp(`${name}: "?([^"\\n]+)"?`).exec(block)?.[1];
  const dims = (block: string) => [...block.matchAll(/^ {2}dims: (\d+)/gm)].map((m) => Number(m[1]));
  const tensor = (block: string) => ({
    name: field(block, 'name'),
    type: field(block, 'data_type'),
    dims: dims(block),
  });
  const states = [...canonical.matchAll(/ {2}state \{\n([\s\S]*?)\n {2}\}/g)].map((m) => ({
    input: field(m[1]!, 'input_name'),
    output: field(m[1]!, 'output_name'),
    type: field(m[1]!, 'data_type'),
    dims: [...m[1]!.matchAll(/^ {4}dims: (\d+)/gm)].map((d) => Number(d[1])),
  }));
  return { inputs: blocks('input').map(tensor), outputs: blocks('output').map(tensor), states };
}

describe.skipIf(!haveProtoc)('the Triton model repository', () => {
  /** The config's state pairs are the graph's state tensors, and the repository's files hold their starts. */
  const checkStates = (calibrator: CalibratorSpec | null, initials: Record<string, number>) => {
    const gate = { ...DEFAULT_GATE_SETTINGS, g0: 0.3 };
    const graph = stepGraphFor(gate, calibrator);
    const options = { modelName: 'knob_step', input: GREY_28X28_INPUT, classCount: 10, gate, calibrator };
    const parsed = tensorsOf(parsedByProtoc(tritonConfigText(options)));
    const byName = (list: Array<{ name: string | undefined }>) =>
      [...list].sort((a, b) => (a.name! < b.name! ? -1 : 1));
    const stateInputs = new Set(parsed.states.map((s) => s.input));
    const stateOutputs = new Set(parsed.states.map((s) => s.output));
    // the config's inputs and outputs plus its state pairs are the graph's inputs and outputs
    expect(byName(parsed.inputs)).toEqual(byName(graph.inputs.filter((t) => !stateInputs.has(t.name))));
    expect(byName(parsed.outputs)).toEqual(byName(graph.outputs.filter((t) => !stateOutputs.has(t.name))));
    for (const state of parsed.states) {
      const input = graph.inputs.find((t) => t.name === state.input)!;
      const output = graph.outputs.find((t) => t.name === state.output)!;
      expect({ type: state.type, dims: state.dims }).toEqual({ type: input.type, dims: input.dims });
      expect({ type: state.type, dims: state.dims }).toEqual({ type: output.type, dims: output.dims });
    }
    expect(parsed.states.map((s) => s.input).sort()).toEqual(Object.keys(initials).sort());
    const files = tritonRepository(options, graph.bytes);
    const initial = (name: string) =>
      new Float64Array(files.find((f) => f.path.endsWith(`/${name}0.bin`))!.bytes.slice().buffer)[0];
    expect(Object.fromEntries(Object.keys(initials).map((name) => [name, initial(name)]))).toEqual(initials);
    expect(files.map((f) => f.path)).toContain('knob_step/1/model.onnx');
  };

  it('continuous mode: the sequence batcher keeps exactly the step graph state tensors, initialised at rest', () => {
    checkStates(null, { g: 0.3, v: 0, u_prev: 0.3 });
  });

  it("a condition-aware calibrator with a hysteresis: its condition state beside the gate's, starting at none", async () => {
    const model = await loadModel(ModelOptionsSchema.parse({ path: DEFAULT_MODEL_PATH }));
    const width = model.description.featureCount!;
    await model.close();
    const conditional = CalibratorSpecSchema.parse({
      method: 'conditional',
      conditions: ['a', 'b'],
      temperatures: [1, 2],
      detector: {
        mean: Array(width).fill(0),
        scale: Array(width).fill(1),
        weights: Array(2 * width).fill(0.1),
        bias: [0, 0],
      },
      hysteresisFrames: 5,
    });
    const gateAt = { g: 0.3, v: 0, u_prev: 0.3 };
    checkStates(conditional, { ...gateAt, condition: -1, condition_run: 0 });
    // one frame of hysteresis is the detector alone: no state
    checkStates({ ...conditional, hysteresisFrames: 1 } as CalibratorSpec, gateAt);
  });

  it('reset mode: no state, plain dynamic batching, the same inputs and outputs as the graph', () => {
    const gate = { ...DEFAULT_GATE_SETTINGS, mode: 'reset' as const };
    const graph = stepGraphFor(gate);
    const canonical = parsedByProtoc(
      tritonConfigText({ modelName: 'knob_reset', input: GREY_28X28_INPUT, classCount: 10, gate }),
    );
    const parsed = tensorsOf(canonical);
    expect(parsed.states).toEqual([]);
    expect(canonical).toMatch(/^dynamic_batching \{/m);
    expect(parsed.inputs).toEqual(graph.inputs);
    expect(parsed.outputs).toEqual(graph.outputs);
  });

  it('protoc refuses a field Triton does not have (the check can fail)', () => {
    expect(() => parsedByProtoc('name: "x"\nmax_batch: 4\n')).toThrow(/protoc refused/);
  });
});
