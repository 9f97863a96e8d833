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
import * as ort from 'onnxruntime-node';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema } from 'onnx-buf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelOptionsSchema, type ModelContract } from '../../src-shared/api/model-options';
import { fitCalibrator, type CalibratorSpec } from '../../src-shared/calibrators/output-calibrator';
import type { InputSpec } from '../../src-shared/frames/input-spec';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../src-shared/gate';
import { loadModel, type LoadedModel } from '../../src-main/core/inference/loaded-model';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { buildStepGraph } from '../../src-main/core/deploy/step-graph';
import {
  appReadout,
  EQUIVALENCE_TOLERANCE,
  readoutDifferences,
  stepGraphReadout,
  type CheckFrames,
} from '../../src-main/core/deploy/step-graph-check';
import { embeddedStepStream } from '../support/embedded-step-stream';

interface Contracted {
  bytes: Uint8Array;
  secondBytes?: Uint8Array;
  contract: ModelContract;
  adapter: { t0: number; certaintyRule: 'entropy' | 'margin' } | null;
}

/** The app's model, opened through its own loader under the contract. */
function openModel(model: Contracted, path: string, secondPath?: string): Promise<LoadedModel> {
  return loadModel(
    ModelOptionsSchema.parse({
      path,
      ...(secondPath === undefined ? {} : { secondPath }),
      contract: model.contract,
      ...(model.adapter === null ? {} : { t0: model.adapter.t0, certaintyRule: model.adapter.certaintyRule }),
    }),
  );
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
  let regular: CheckFrames & { labels: Int32Array };
  let irregular: CheckFrames;
  let input: InputSpec;
  let knobNative: LoadedModel;

  beforeAll(async () => {
    knobNative = await openModel(KNOB_NATIVE, DEFAULT_MODEL_PATH);
    input = knobNative.description.input;
    regular = await embeddedStepStream(input, false);
    irregular = await embeddedStepStream(input, true);
  });
  afterAll(() => knobNative.close());

  const check = async (
    model: Contracted,
    loaded: LoadedModel,
    stream: CheckFrames,
    settings: GateSettings,
    calibrator: CalibratorSpec | null = null,
  ) => {
    const k = loaded.description.classCount;
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
    const app = await appReadout(loaded, stream, settings, calibrator);
    const step = await stepGraphReadout(graph, stream, input, settings, k);
    const worst = readoutDifferences(step, app);
    expect(worst.gate).toBeLessThan(EQUIVALENCE_TOLERANCE);
    expect(worst.uStar).toBeLessThan(EQUIVALENCE_TOLERANCE);
    expect(worst.probabilities).toBeLessThan(EQUIVALENCE_TOLERANCE);
    // the schedule moves the gate: a test where g sat still would prove little
    expect(Math.max(...app.gate) - Math.min(...app.gate)).toBeGreaterThan(0.05);
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
      await check(KNOB_NATIVE, knobNative, regular, { ...DEFAULT_GATE_SETTINGS, ...patch });
    });
  }

  it('continuous mode with irregular frame intervals (Knob-ODE ZOH and Tustin)', async () => {
    for (const discretization of ['zoh', 'tustin'] as const)
      await check(KNOB_NATIVE, knobNative, irregular, { ...DEFAULT_GATE_SETTINGS, discretization });
  });

  it('reset mode (Knob-ODE, ODE-Lite)', async () => {
    for (const variant of ['second-order', 'ema'] as const)
      await check(KNOB_NATIVE, knobNative, regular, { ...DEFAULT_GATE_SETTINGS, variant, mode: 'reset' });
  });

  it('with a calibrator applied after fusion (temperature, vector, matrix, Dirichlet, Platt, beta)', async () => {
    const k = knobNative.description.classCount;
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
      { method: 'platt', perClass: Array.from({ length: k }, (_, c) => ({ a: 0.6 + c / 20, b: (c % 3) / 5 - 0.2 })) },
      {
        method: 'beta',
        perClass: Array.from({ length: k }, (_, c) => ({
          a: 0.8 + c / 30,
          b: 1.1 - c / 40,
          c: 0.1 * (c % 2),
          m: null,
        })),
      },
    ];
    for (const calibrator of calibrators)
      await check(KNOB_NATIVE, knobNative, regular, DEFAULT_GATE_SETTINGS, calibrator);
  });

  it('with each calibrator fitted on the stream: isotonic, histogram binning (three edge rules), scaling-binning, PTS, DAC, ProCal', async () => {
    // fitted on the dynamic branch's logits (and the model's features) of the stream's frames, then
    // applied to the fused logits: real fitted edges, plateaus and ties, not hand-made ones
    const k = knobNative.description.classCount;
    const branches = await knobNative.run(regular.frames, regular.count, 0, true);
    const features = { width: branches.features!.length / regular.count, values: branches.features! };
    const methods = ['isotonic', 'histogram-binning', 'scaling-binning', 'pts', 'dac', 'procal'] as const;
    const fitted = methods.map((method) => fitCalibrator(method, branches.zDyn, regular.labels, k, features).spec);
    const histogram = fitted[1] as Extract<CalibratorSpec, { method: 'histogram-binning' }>;
    const otherEdgeRules: CalibratorSpec[] = [
      { ...histogram, edgeRule: 'left-closed' },
      {
        ...histogram,
        edgeRule: 'one-in-extra-bin',
        perClass: histogram.perClass.map((f) => ({ ...f, values: [...f.values, 0.97] })),
      },
    ];
    for (const calibrator of [...fitted, ...otherEdgeRules])
      await check(KNOB_NATIVE, knobNative, regular, DEFAULT_GATE_SETTINGS, calibrator);
    await check(KNOB_NATIVE, knobNative, irregular, { ...DEFAULT_GATE_SETTINGS, discretization: 'tustin' }, fitted[5]!);
  });

  it('with a condition-aware calibrator whose hysteresis carries state from frame to frame (condition_* in and out)', async () => {
    // conditions that the features hardly tell apart (alternating 7-frame blocks): a detector that
    // flickers, so the applied condition depends on the frames before it
    const k = knobNative.description.classCount;
    const branches = await knobNative.run(regular.frames, regular.count, 0, true);
    const features = { width: branches.features!.length / regular.count, values: branches.features! };
    const codes = Int32Array.from({ length: regular.count }, (_, i) => Math.floor(i / 7) % 2);
    const conditions = { names: ['odd', 'even'], codes, hysteresisFrames: 4 };
    const spec = fitCalibrator('conditional', branches.zDyn, regular.labels, k, features, undefined, conditions).spec;
    expect(spec).toMatchObject({ method: 'conditional', hysteresisFrames: 4 });
    const graph = buildStepGraph({
      model: KNOB_NATIVE.bytes,
      contract: KNOB_NATIVE.contract,
      adapter: null,
      input,
      gate: DEFAULT_GATE_SETTINGS,
      calibrator: spec,
      classCount: k,
    });
    const inputs = (await ort.InferenceSession.create(graph)).inputNames;
    expect(inputs).toEqual(expect.arrayContaining(['condition', 'condition_run']));
    await check(KNOB_NATIVE, knobNative, regular, DEFAULT_GATE_SETTINGS, spec);
    await check(KNOB_NATIVE, knobNative, irregular, DEFAULT_GATE_SETTINGS, spec);
    // the hysteresis changes what is shown: the same detector without it gives other probabilities
    const alone = { ...spec, hysteresisFrames: 1 } as CalibratorSpec;
    const withHysteresis = await appReadout(knobNative, regular, DEFAULT_GATE_SETTINGS, spec);
    const withoutHysteresis = await appReadout(knobNative, regular, DEFAULT_GATE_SETTINGS, alone);
    expect(readoutDifferences(withHysteresis, withoutHysteresis).probabilities).toBeGreaterThan(1e-3);
    await check(KNOB_NATIVE, knobNative, regular, DEFAULT_GATE_SETTINGS, alone);
    // reset mode judges each frame alone: no state in the graph
    await check(KNOB_NATIVE, knobNative, regular, { ...DEFAULT_GATE_SETTINGS, mode: 'reset' }, spec);
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
    const loaded = await openModel(model, first, second);
    try {
      await check(model, loaded, regular, DEFAULT_GATE_SETTINGS);
      await check(model, loaded, regular, { ...DEFAULT_GATE_SETTINGS, discretization: 'tustin', mode: 'reset' });
    } finally {
      await loaded.close();
    }
  });

  it('the single-classifier contract: z / T0 and the entropy and margin rules', async () => {
    const path = await writeTemp(branchClassifier('z_dyn'));
    for (const certaintyRule of ['entropy', 'margin'] as const) {
      const model: Contracted = {
        bytes: readFileSync(path),
        contract: 'single-classifier',
        adapter: { t0: 2, certaintyRule },
      };
      const loaded = await openModel(model, path);
      try {
        await check(model, loaded, regular, DEFAULT_GATE_SETTINGS);
      } finally {
        await loaded.close();
      }
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
