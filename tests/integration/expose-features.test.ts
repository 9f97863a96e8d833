/**
 * Any classifier's penultimate activation as a `features` output (issue 31, deliverable 1), with
 * the real CLI, onnxruntime and real models: a CNN trained and exported by PyTorch the ordinary way
 * (tests/fixtures/models/foreign-cnn.onnx, its script in tools/reference) and a MatMul + Add
 * classifier built here. `knob features` finds the final layer, writes the model with the tensor it
 * reads as a second output, and proves it (the layer maps it to the logits). The app then takes the
 * model as a single classifier with features: a run records them, the condition-aware calibrator
 * fits on them, and its bundle's step graph, which computes the detector from them, verifies.
 * Tensors that are not a feature row, or do not exist, are refused by name.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KnobBackend } from '../../src-main/core/backend/knob-backend';
import { readTraceFile } from '../../src-main/core/recording/trace-arrow';
import { verifiedCalibratedBundle } from '../support/calibrated-bundle';
import { knob, knobFailureLine, mixedConditionsRun } from '../support/knob-cli';
import { buildOnnxModel, classMeanWeights, linearClassifier } from '../support/onnx-builder';
import { fashionMnistSample } from '../support/fashion-mnist';

const FOREIGN = 'tests/fixtures/models/foreign-cnn.onnx';
const dir = mkdtempSync(join(tmpdir(), 'knob-features-'));
let backend: KnobBackend | null = null;
afterAll(async () => backend?.close());

describe('knob features', () => {
  it("finds a PyTorch CNN's final Gemm, exposes what it reads, and the app records and deploys it", async () => {
    const listed = await knob('features', '--model', FOREIGN, '--list');
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(
      /final layer: the Gemm node '\/fc2\/Gemm' makes 'logits'; it reads '\/Relu_2_output_0' \(64 features, 10 classes\)/,
    );
    expect(listed.stdout).toMatch(/\n {2}\/fc1\/Gemm_output_0 {2}Gemm\n/);

    const exposed = join(dir, 'foreign-features.onnx');
    const written = await knob('features', '--model', FOREIGN, '--out', exposed, '--json');
    expect(written.status, written.stderr).toBe(0);
    const summary = JSON.parse(written.stdout) as { tensor: string; width: number; headDifference: number };
    expect(summary).toMatchObject({ tensor: '/Relu_2_output_0', width: 64 });
    expect(summary.headDifference).toBeLessThan(1e-4);

    // the desk loads it as a single classifier that gives features
    backend = new KnobBackend();
    const model = await backend.handle('model.load', { path: exposed });
    expect(model).toMatchObject({ contract: 'single-classifier', featureCount: 64, classCount: 10 });

    // a run keeps them; the condition-aware calibrator fits on them; its bundle verifies
    await mixedConditionsRun(join(dir, 'run'), 1200, exposed);
    const trace = join(dir, 'run', 'trace.arrow');
    expect((await readTraceFile(trace)).trace.features?.width).toBe(64);
    const { manifest, verified } = await verifiedCalibratedBundle(trace, 'conditional', dir, exposed);
    expect(manifest.calibrator?.method).toBe('conditional');
    expect(verified).toMatch(/equivalence: step graph = app within \S+ on \d+ frames/);
  }, 180_000);

  it('finds a MatMul + Add layer, and refuses what is not a feature row by name', async () => {
    const sample = fashionMnistSample(200);
    const linear = join(dir, 'linear.onnx');
    writeFileSync(linear, linearClassifier(classMeanWeights(sample.images, sample.labels, 10, 4)));
    const written = await knob('features', '--model', linear, '--out', join(dir, 'linear-features.onnx'));
    expect(written.status, written.stderr).toBe(0);
    expect(written.stdout).toMatch(
      /'flat' as the output 'features', 784 values an image \(the MatMul node .* and its Add make 'logits'\)/,
    );

    // logits after a ReLU: no linear layer makes them; --node names a tensor, which must be a row
    const { weights } = classMeanWeights(sample.images, sample.labels, 10, 4);
    const relu = join(dir, 'relu.onnx');
    writeFileSync(
      relu,
      buildOnnxModel({
        inputs: [{ name: 'x', shape: ['N', 1, 28, 28] }],
        outputs: [{ name: 'logits', shape: ['N', 10] }],
        nodes: [
          { op: 'Flatten', inputs: ['x'], outputs: ['flat'], attributes: { axis: 1 } },
          { op: 'MatMul', inputs: ['flat', 'W'], outputs: ['product'] },
          { op: 'Relu', inputs: ['product'], outputs: ['logits'] },
        ],
        initializers: [{ name: 'W', dims: [784, 10], values: weights }],
      }),
    );
    expect(knobFailureLine(await knob('features', '--model', relu, '--out', join(dir, 'r.onnx')))).toMatch(
      /'logits' is made by a Relu node, not a Gemm or MatMul \(\+ Add\) layer; name the features tensor yourself/,
    );
    const named = await knob('features', '--model', relu, '--node', 'flat', '--out', join(dir, 'r.onnx'));
    expect(named.status, named.stderr).toBe(0);
    expect(named.stdout).toMatch(/'flat' as the output 'features', 784 values an image\n/);
    expect(
      knobFailureLine(await knob('features', '--model', relu, '--node', 'x', '--out', join(dir, 'x.onnx'))),
    ).toMatch(/'x' is float32 \[1, 1, 28, 28\] for one image; a \[1, F\] float feature row is expected/);
    expect(
      knobFailureLine(await knob('features', '--model', relu, '--node', 'nowhere', '--out', join(dir, 'n.onnx'))),
    ).toMatch(/has no tensor named 'nowhere'/);
    expect(knobFailureLine(await knob('features', '--model', 'default', '--out', join(dir, 'd.onnx')))).toMatch(
      /already has an output named 'features'/,
    );
    // logits and probabilities: with features beside them the app could not tell which are the logits
    const two = join(dir, 'two-outputs.onnx');
    writeFileSync(
      two,
      buildOnnxModel({
        inputs: [{ name: 'x', shape: ['N', 1, 28, 28] }],
        outputs: [
          { name: 'logits', shape: ['N', 10] },
          { name: 'probs', shape: ['N', 10] },
        ],
        nodes: [
          { op: 'Flatten', inputs: ['x'], outputs: ['flat'], attributes: { axis: 1 } },
          { op: 'MatMul', inputs: ['flat', 'W'], outputs: ['product'] },
          { op: 'Softmax', inputs: ['product'], outputs: ['probs'], attributes: { axis: 1 } },
          { op: 'Identity', inputs: ['product'], outputs: ['logits'] },
        ],
        initializers: [{ name: 'W', dims: [784, 10], values: weights }],
      }),
    );
    expect(
      knobFailureLine(await knob('features', '--model', two, '--node', 'flat', '--out', join(dir, 't.onnx'))),
    ).toMatch(/would give logits, probs, features: the app reads a classifier as one logits output beside 'features'/);
  }, 120_000);
});
