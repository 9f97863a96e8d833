/**
 * The ONNX step graph (src-main/core/deploy/step-graph.ts) against the app's own computation, frame
 * by frame: the embedded stream with a step corruption schedule (clean, then shot noise at
 * severity 5), fed to the step graph in onnxruntime-node one frame per call with the state carried
 * from call to call, and to the app's model, gate and fusion. Fused probabilities (after the
 * calibrator), the gate and u* agree within 1e-5 for every variant and discretisation, both
 * modes, irregular frame intervals, the Knob-native and the single-classifier contracts (a real
 * classifier: the shipped model's dynamic branch cut out as its own model), and calibrators.
 */
import { readFileSync } from 'node:fs';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema } from 'onnx-buf';
import * as ort from 'onnxruntime-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { ModelOptionsSchema, type ModelContract } from '../../src-shared/api/model-options';
import { calibrateLogits, type CalibratorSpec } from '../../src-shared/calibrators/output-calibrator';
import { createFramePreparer } from '../../src-shared/frames/prepare-frames';
import type { InputSpec } from '../../src-shared/frames/input-spec';
import { fuseRowInto } from '../../src-shared/fusion/convex-fusion';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../src-shared/gate';
import { createGateState } from '../../src-shared/gate/gate-state';
import { runGate } from '../../src-shared/gate/gate-kernel';
import { allocateBatchMetadata } from '../../src-shared/trace/trace-builder';
import { loadModel } from '../../src-main/core/inference/loaded-model';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { openSourcePath } from '../../src-main/core/sources/open-source';
import { buildStepGraph, STEP_INPUTS, STEP_OUTPUTS } from '../../src-main/core/deploy/step-graph';

const FRAMES = 240;
const TOLERANCE = 1e-5;

interface Stream {
  input: InputSpec;
  frames: Uint8Array;
  timestamps: Float64Array;
  nominalDt: number;
}

/** The embedded stream, fitted to the model's input, clean for 120 frames then shot noise 5. */
async function embeddedStream(input: InputSpec, irregular: boolean): Promise<Stream> {
  const source = await openSourcePath('default', { target: input, labelNames: null });
  const target = { width: input.width, height: input.height, channels: input.channels };
  const schedule = {
    kind: 'step' as const,
    corruption: 'shot_noise' as const,
    levels: [
      { atFrame: 0, severity: 0 },
      { atFrame: FRAMES / 2, severity: 5 },
    ],
  };
  const preparer = createFramePreparer(target, schedule, 7);
  const frameBytes = input.width * input.height * input.channels;
  const frames = new Uint8Array(FRAMES * frameBytes);
  for await (const batch of source.batches(FRAMES)) {
    preparer.prepare(batch.frames, source.info, FRAMES, 0, batch.first, frames, allocateBatchMetadata(FRAMES));
    break;
  }
  const nominalDt = 1 / source.info.frameRateHz;
  // irregular: intervals between 0.4 and 2.5 nominal ones (a dropped-frame camera)
  const timestamps = new Float64Array(FRAMES);
  for (let i = 1; i < FRAMES; i++)
    timestamps[i] = timestamps[i - 1]! + (irregular ? nominalDt * (0.4 + ((i * 7919) % 23) / 10.5) : nominalDt);
  return { input, frames, timestamps, nominalDt };
}

interface Contracted {
  bytes: Uint8Array;
  secondBytes?: Uint8Array;
  contract: ModelContract;
  adapter: { t0: number; certaintyRule: 'entropy' | 'margin' } | null;
}

/** The app's branch outputs for the stream, through its own model loader. */
async function appBranches(model: Contracted, path: string, stream: Stream, secondPath?: string) {
  const loaded = await loadModel(
    ModelOptionsSchema.parse({
      path,
      ...(secondPath === undefined ? {} : { secondPath }),
      contract: model.contract,
      ...(model.adapter === null ? {} : { t0: model.adapter.t0, certaintyRule: model.adapter.certaintyRule }),
    }),
  );
  try {
    const out = await loaded.run(stream.frames, FRAMES, 0);
    return { ...out, classCount: loaded.description.classCount };
  } finally {
    await loaded.close();
  }
}

/** What the app shows for each frame: gate, fused probabilities after the calibrator, u*. */
function appReadout(
  branches: Awaited<ReturnType<typeof appBranches>>,
  stream: Stream,
  settings: GateSettings,
  calibrator: CalibratorSpec | null,
) {
  const k = branches.classCount;
  const g = new Float64Array(FRAMES);
  const v = new Float64Array(FRAMES);
  runGate(
    settings,
    { uRef: branches.uRef, timestampsSeconds: stream.timestamps, nominalDtSeconds: stream.nominalDt },
    0,
    FRAMES,
    createGateState(settings.g0),
    { g, v },
  );
  const fused = new Float64Array(FRAMES * k);
  for (let i = 0; i < FRAMES; i++) fuseRowInto(branches.zStatic, branches.zDyn, i * k, k, g[i]!, fused, i * k);
  const logProbabilities =
    calibrator === null
      ? calibrateLogits({ method: 'temperature', temperature: 1 }, fused, k)
      : calibrateLogits(calibrator, fused, k);
  return { g, probabilities: logProbabilities.map(Math.exp), uRef: branches.uRef };
}

/** The step graph over the stream, one frame per call, the state carried between calls. */
async function stepGraphReadout(graph: Uint8Array, stream: Stream, settings: GateSettings, k: number) {
  const session = await ort.InferenceSession.create(graph);
  const frameBytes = stream.input.width * stream.input.height * stream.input.channels;
  const shape = [1, stream.input.height, stream.input.width, stream.input.channels];
  const gate = new Float64Array(FRAMES);
  const uStar = new Float64Array(FRAMES);
  const probabilities = new Float64Array(FRAMES * k);
  let state = { g: settings.g0, v: 0, uPrev: settings.g0 };
  const scalar = (x: number) => new ort.Tensor('float64', Float64Array.of(x), [1, 1]);
  for (let i = 0; i < FRAMES; i++) {
    const feeds: Record<string, ort.Tensor> = {
      [STEP_INPUTS.frames]: new ort.Tensor(
        'uint8',
        stream.frames.subarray(i * frameBytes, (i + 1) * frameBytes),
        shape,
      ),
    };
    if (settings.mode === 'continuous') {
      feeds[STEP_INPUTS.g] = scalar(state.g);
      feeds[STEP_INPUTS.v] = scalar(state.v);
      feeds[STEP_INPUTS.uPrev] = scalar(state.uPrev);
      feeds[STEP_INPUTS.dt] = scalar(i === 0 ? stream.nominalDt : stream.timestamps[i]! - stream.timestamps[i - 1]!);
    }
    const out = await session.run(feeds);
    gate[i] = (out[STEP_OUTPUTS.gate]!.data as Float32Array)[0]!;
    uStar[i] = (out[STEP_OUTPUTS.uStar]!.data as Float32Array)[0]!;
    probabilities.set(out[STEP_OUTPUTS.probabilities]!.data as Float32Array, i * k);
    if (settings.mode === 'continuous')
      state = {
        g: (out[STEP_OUTPUTS.gNext]!.data as Float64Array)[0]!,
        v: (out[STEP_OUTPUTS.vNext]!.data as Float64Array)[0]!,
        uPrev: (out[STEP_OUTPUTS.uPrevNext]!.data as Float64Array)[0]!,
      };
  }
  await session.release();
  return { gate, uStar, probabilities };
}

function maxDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

const KNOB_NATIVE: Contracted = { bytes: readFileSync(DEFAULT_MODEL_PATH), contract: 'knob-native', adapter: null };

/**
 * A plain classifier made from the shipped model: its graph with one branch as the only output
 * (the nodes that only fed the others are left; onnxruntime prunes them). Two of them share every
 * value name, as two exports of one architecture do.
 */
function branchClassifier(branch: 'z_static' | 'z_dyn'): Uint8Array {
  const model = fromBinary(ModelProtoSchema, readFileSync(DEFAULT_MODEL_PATH));
  model.graph!.output = model.graph!.output.filter((o) => o.name === branch);
  model.metadataProps = model.metadataProps.filter((p) => p.key === 'knob.input' || p.key === 'knob.labels');
  return toBinary(ModelProtoSchema, create(ModelProtoSchema, model));
}

describe('the step graph reproduces the app frame by frame', () => {
  let regular: Stream;
  let irregular: Stream;
  let knobBranches: Awaited<ReturnType<typeof appBranches>>;
  let input: InputSpec;

  beforeAll(async () => {
    const probe = await loadModel(ModelOptionsSchema.parse({ path: DEFAULT_MODEL_PATH }));
    input = probe.description.input;
    await probe.close();
    regular = await embeddedStream(input, false);
    irregular = await embeddedStream(input, true);
    knobBranches = await appBranches(KNOB_NATIVE, DEFAULT_MODEL_PATH, regular);
  });

  const check = async (
    model: Contracted,
    branches: Awaited<ReturnType<typeof appBranches>>,
    stream: Stream,
    settings: GateSettings,
    calibrator: CalibratorSpec | null = null,
  ) => {
    const k = branches.classCount;
    const graph = buildStepGraph({
      model: model.bytes,
      ...(model.secondBytes === undefined ? {} : { secondModel: model.secondBytes }),
      contract: model.contract,
      adapter: model.adapter,
      input,
      gate: settings,
      calibrator,
      classCount: k,
    });
    const app = appReadout(branches, stream, settings, calibrator);
    const step = await stepGraphReadout(graph, stream, settings, k);
    const clampedG = Array.from(app.g, (g) => Math.min(1, Math.max(0, g)));
    expect(maxDifference(step.gate, clampedG)).toBeLessThan(TOLERANCE);
    expect(
      maxDifference(
        step.uStar,
        Array.from(app.uRef, (u) => Math.min(1, Math.max(0, u))),
      ),
    ).toBeLessThan(TOLERANCE);
    expect(maxDifference(step.probabilities, app.probabilities)).toBeLessThan(TOLERANCE);
    // the schedule moves the gate: a test where g sat still would prove little
    expect(Math.max(...clampedG) - Math.min(...clampedG)).toBeGreaterThan(0.05);
  };

  const variants: Array<[string, Partial<GateSettings>]> = [
    ['Knob-ODE, ZOH', { variant: 'second-order', discretization: 'zoh' }],
    ['Knob-ODE, Tustin', { variant: 'second-order', discretization: 'tustin' }],
    ['Knob-ODE, Tustin pre-warped', { variant: 'second-order', discretization: 'tustin', tustinPrewarp: true }],
    ['Knob-ODE, ZOH, over-damped', { variant: 'second-order', discretization: 'zoh', zeta: 2.5 }],
    ['Knob-ODE, ZOH, critically damped', { variant: 'second-order', discretization: 'zoh', zeta: 1 }],
    ['ODE-Lite, ZOH', { variant: 'ema', discretization: 'zoh' }],
    ['ODE-Lite, Tustin', { variant: 'ema', discretization: 'tustin' }],
    ['Knob-IA', { variant: 'instant' }],
  ];
  for (const [name, patch] of variants) {
    it(`continuous mode: ${name}`, async () => {
      await check(KNOB_NATIVE, knobBranches, regular, { ...DEFAULT_GATE_SETTINGS, ...patch });
    });
  }

  it('continuous mode with irregular frame intervals (Knob-ODE ZOH and Tustin)', async () => {
    const branches = await appBranches(KNOB_NATIVE, DEFAULT_MODEL_PATH, irregular);
    for (const discretization of ['zoh', 'tustin'] as const)
      await check(KNOB_NATIVE, branches, irregular, { ...DEFAULT_GATE_SETTINGS, discretization });
  });

  it('reset mode (Knob-ODE, ODE-Lite)', async () => {
    for (const variant of ['second-order', 'ema'] as const)
      await check(KNOB_NATIVE, knobBranches, regular, { ...DEFAULT_GATE_SETTINGS, variant, mode: 'reset' });
  });

  it('with a calibrator applied after fusion (temperature, vector, matrix, Dirichlet)', async () => {
    const k = knobBranches.classCount;
    const identity = Array.from({ length: k * k }, (_, at) => (at % (k + 1) === 0 ? 1 : 0));
    const calibrators: CalibratorSpec[] = [
      { method: 'temperature', temperature: 1.7 },
      {
        method: 'vector',
        weights: Array.from({ length: k }, (_, c) => 0.5 + c / k),
        bias: Array.from({ length: k }, (_, c) => c / 10 - 0.4),
      },
      {
        method: 'matrix',
        weights: identity.map((w, at) => w * 0.8 + ((at * 37) % 11) / 200),
        bias: Array.from({ length: k }, (_, c) => (c % 3) / 10),
      },
      {
        method: 'dirichlet',
        weights: identity.map((w, at) => w * 0.9 + ((at * 13) % 7) / 300),
        bias: Array.from({ length: k }, () => 0.05),
        offDiagonal: 0.001,
        intercept: 0.001,
      },
    ];
    for (const calibrator of calibrators)
      await check(KNOB_NATIVE, knobBranches, regular, DEFAULT_GATE_SETTINGS, calibrator);
  });

  it('the two-classifiers contract: u* = 1 - TV of the two softmax outputs, the second graph renamed', async () => {
    const first = await writeTemp(branchClassifier('z_static'));
    const second = await writeTemp(branchClassifier('z_dyn'));
    const model: Contracted = {
      bytes: readFileSync(first),
      secondBytes: readFileSync(second),
      contract: 'two-classifiers',
      adapter: null,
    };
    const branches = await appBranches(model, first, regular, second);
    await check(model, branches, regular, DEFAULT_GATE_SETTINGS);
    await check(model, branches, regular, { ...DEFAULT_GATE_SETTINGS, discretization: 'tustin', mode: 'reset' });
  });

  it('the single-classifier contract: z / T0 and the entropy and margin rules', async () => {
    const path = await writeTemp(branchClassifier('z_dyn'));
    for (const certaintyRule of ['entropy', 'margin'] as const) {
      const model: Contracted = {
        bytes: readFileSync(path),
        contract: 'single-classifier',
        adapter: { t0: 2, certaintyRule },
      };
      const branches = await appBranches(model, path, regular);
      await check(model, branches, regular, DEFAULT_GATE_SETTINGS);
    }
  });
});

async function writeTemp(bytes: Uint8Array): Promise<string> {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const path = join(mkdtempSync(join(tmpdir(), 'knob-step-')), 'classifier.onnx');
  writeFileSync(path, bytes);
  return path;
}
