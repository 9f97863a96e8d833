/**
 * The step graph runs unchanged in onnxruntime-web (its WebAssembly build, here in Node, the same
 * binary a browser loads): the embedded stream with the step corruption schedule, one frame per
 * call with the state carried between calls, within 1e-5 of the app frame by frame. Continuous
 * mode (Knob-ODE, Tustin, irregular intervals) with ProCal, whose k-NN reads the model's features,
 * and reset mode with isotonic regression, scaling-binning and PTS: between them every kind of
 * node the graph uses (the float64 gate, TopK, Gather, the comparisons of the binned maps, MatMul
 * over the feature bank, Tanh).
 */
import { readFileSync } from 'node:fs';
import * as ortWeb from 'onnxruntime-web';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelOptionsSchema } from '../../src-shared/api/model-options';
import { fitCalibrator, type CalibratorSpec } from '../../src-shared/calibrators/output-calibrator';
import { DEFAULT_GATE_SETTINGS, type GateSettings } from '../../src-shared/gate';
import { buildStepGraph } from '../../src-main/core/deploy/step-graph';
import {
  appReadout,
  EQUIVALENCE_TOLERANCE,
  readoutDifferences,
  stepGraphReadout,
  type CheckFrames,
} from '../../src-main/core/deploy/step-graph-check';
import { loadModel, type LoadedModel } from '../../src-main/core/inference/loaded-model';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { embeddedStepStream } from '../support/embedded-step-stream';

// one WebAssembly thread: the test needs no worker threads
ortWeb.env.wasm.numThreads = 1;

describe('the step graph in onnxruntime-web', () => {
  let model: LoadedModel;
  let stream: CheckFrames & { labels: Int32Array };
  let irregular: CheckFrames;
  let fitted: (method: 'procal' | 'isotonic' | 'scaling-binning' | 'pts') => CalibratorSpec;

  beforeAll(async () => {
    model = await loadModel(ModelOptionsSchema.parse({ path: DEFAULT_MODEL_PATH, executionProviders: ['cpu'] }));
    stream = await embeddedStepStream(model.description.input, false, 160);
    irregular = await embeddedStepStream(model.description.input, true, 160);
    const branches = await model.run(stream.frames, stream.count, 0, true);
    const features = { width: branches.features!.length / stream.count, values: branches.features! };
    fitted = (method) =>
      fitCalibrator(method, branches.zDyn, stream.labels, model.description.classCount, features).spec;
  });
  afterAll(() => model.close());

  const check = async (frames: CheckFrames, gate: GateSettings, calibrator: CalibratorSpec) => {
    const input = model.description.input;
    const k = model.description.classCount;
    const graph = buildStepGraph({
      model: readFileSync(DEFAULT_MODEL_PATH),
      contract: 'knob-native',
      adapter: null,
      input,
      gate,
      calibrator,
      classCount: k,
    });
    const app = await appReadout(model, frames, gate, calibrator);
    const web = await stepGraphReadout(graph, frames, input, gate, k, ortWeb);
    const worst = readoutDifferences(web, app);
    expect(worst.gate).toBeLessThan(EQUIVALENCE_TOLERANCE);
    expect(worst.uStar).toBeLessThan(EQUIVALENCE_TOLERANCE);
    expect(worst.probabilities).toBeLessThan(EQUIVALENCE_TOLERANCE);
    expect(Math.max(...app.gate) - Math.min(...app.gate)).toBeGreaterThan(0.05);
  };

  it('continuous mode, Knob-ODE Tustin, irregular intervals, ProCal on the model features', async () => {
    await check(irregular, { ...DEFAULT_GATE_SETTINGS, discretization: 'tustin' }, fitted('procal'));
  });

  it('reset mode with isotonic regression, scaling-binning and PTS', async () => {
    for (const method of ['isotonic', 'scaling-binning', 'pts'] as const)
      await check(stream, { ...DEFAULT_GATE_SETTINGS, mode: 'reset' }, fitted(method));
  });
});
