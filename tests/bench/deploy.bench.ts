/**
 * Issue 15 benchmark: the step graph's throughput against the bare model in onnxruntime-node, the
 * same batch, provider and session options (one intra-op thread, as the app's sessions on a
 * 2-core machine), timed alternately in one run. The bare model is given
 * its float input ready-made; the step graph takes the 8-bit frames and does the preprocessing,
 * the gate, the fusion and the calibrator itself. Target: at least 0.97 of bare. Prints; never fails.
 */
import { readFileSync } from 'node:fs';
import * as ort from 'onnxruntime-node';
import { DEFAULT_GATE_SETTINGS } from '../../src-shared/gate';
import { framesToTensorInto, tensorMap, tensorShape } from '../../src-shared/frames/frame-to-tensor';
import { buildStepGraph, STEP_INPUTS } from '../../src-main/core/deploy/step-graph';
import { DEFAULT_MODEL_PATH } from '../../src-main/core/model-card/default-model';
import { fashionMnistSample } from '../support/fashion-mnist';
import { GREY_28X28_INPUT } from '../support/onnx-builder';
import { row } from './bench-timing';

const BATCH = 256;
const ROUNDS = 60;

export async function runDeployBench(): Promise<void> {
  process.stdout.write(`\nStep graph vs bare model (onnxruntime-node, CPU, batch ${BATCH}, the shipped model)\n`);
  const spec = GREY_28X28_INPUT;
  const modelBytes = readFileSync(DEFAULT_MODEL_PATH);
  const graph = buildStepGraph({
    model: modelBytes,
    contract: 'knob-native',
    adapter: null,
    input: spec,
    gate: DEFAULT_GATE_SETTINGS,
    calibrator: { method: 'temperature', temperature: 1.3 },
    classCount: 10,
  });
  const sample = fashionMnistSample(BATCH);
  const frames = new Uint8Array(BATCH * 784);
  sample.images.forEach((image, i) => frames.set(image, i * 784));
  const floats = new Float32Array(BATCH * 784);
  framesToTensorInto(frames, BATCH, spec, tensorMap(spec), floats);
  // one intra-op thread each, as the app lays sessions out on this machine (session-layout.ts)
  const options = { intraOpNumThreads: 1, interOpNumThreads: 1 };
  const bare = await ort.InferenceSession.create(modelBytes, options);
  const step = await ort.InferenceSession.create(graph, options);
  const bareFeeds = { [bare.inputNames[0]!]: new ort.Tensor('float32', floats, tensorShape(spec, BATCH)) };
  const column = (value: number) => new ort.Tensor('float64', new Float64Array(BATCH).fill(value), [BATCH, 1]);
  const stepFeeds = {
    [STEP_INPUTS.frames]: new ort.Tensor('uint8', frames, [BATCH, 28, 28, 1]),
    [STEP_INPUTS.g]: column(0.5),
    [STEP_INPUTS.v]: column(0),
    [STEP_INPUTS.uPrev]: column(0.5),
    [STEP_INPUTS.dt]: column(1 / 30),
  };
  const bareMs: number[] = [];
  const stepMs: number[] = [];
  for (let round = 0; round < ROUNDS + 2; round++) {
    // alternate, so both see the same machine state; the first two rounds warm up
    for (const [session, feeds, samples] of [
      [bare, bareFeeds, bareMs],
      [step, stepFeeds, stepMs],
    ] as const) {
      const started = performance.now();
      await session.run(feeds);
      if (round >= 2) samples.push(performance.now() - started);
    }
  }
  const best = (xs: number[]) => Math.min(...xs);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const fps = (ms: number) => `${((BATCH / ms) * 1000).toFixed(0)} frames/s`;
  row(
    'bare model (float input given)',
    `best ${best(bareMs).toFixed(2)} ms (${fps(best(bareMs))}), median ${median(bareMs).toFixed(2)} ms`,
  );
  row(
    'step graph (frames in; gate, fusion, calibrator)',
    `best ${best(stepMs).toFixed(2)} ms (${fps(best(stepMs))}), median ${median(stepMs).toFixed(2)} ms`,
  );
  row(
    'throughput ratio step graph / bare (best; median)',
    `${(best(bareMs) / best(stepMs)).toFixed(3)}; ${(median(bareMs) / median(stepMs)).toFixed(3)} (target >= 0.97)`,
  );
  await bare.release();
  await step.release();
}
