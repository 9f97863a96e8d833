/**
 * The Knob heads of a backbone (src-shared/heads, issue 31) against their definitions: the gate
 * target network's gradient against central finite differences of its objective (away from the
 * kinks of ReLU and of the oracle-advantage target), and a fit on synthetic features where the
 * truth is known: clean rows whose classes the features tell apart, corrupted rows whose class signal
 * is weak and whose corruption shows in a feature of its own. There the dynamic head (clean rows)
 * is confident, the static one (corrupted rows, smoothed) is not, u* is high on clean rows and low
 * on corrupted ones, and it ranks the rows where the dynamic branch wins (the oracle advantage).
 * Then the heads as deploy/knob-heads-graph.ts writes them, run in onnxruntime, against the app's.
 */
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { knobModelWithHeads } from '../../src-main/core/deploy/knob-heads-graph';
import { parseOnnxModel } from '../../src-main/core/deploy/feature-tensor';
import { expectOutputsOfHeads } from '../support/head-outputs';
import { buildOnnxModel } from '../support/onnx-builder';
import { multiplyInto } from '../../src-shared/calibrators/matrix-products';
import { dominantSubspace } from '../../src-shared/heads/dominant-subspace';
import { gateTargetLoss, gateTargetOf } from '../../src-shared/heads/gate-target-network';
import {
  branchFigures,
  fitKnobHeads,
  foldedOntoFeatures,
  GATE_FULL_WIDTH,
  knobHeadOutputs,
  type HeadsData,
  type HeadsFit,
} from '../../src-shared/heads/knob-heads';
import { normalDraw, seededRandom } from '../../src-shared/random';
import { syntheticBackboneFeatures } from '../support/synthetic-features';

const K = 4;
const WIDTH = 8;

const syntheticRows = (rows: number, seed: number) => syntheticBackboneFeatures(rows, WIDTH, K, seed);

/** The card's figures of a fit on its held-out rows. */
function heldOutFigures(fit: HeadsFit, data: HeadsData) {
  const rows = fit.validation;
  return branchFigures(
    knobHeadOutputs(fit.heads, data, rows),
    Int32Array.from(rows, (r) => data.labels[r]!),
    Float64Array.from(rows, (r) => data.severity[r]!),
    K,
  );
}

describe('the gate target network', () => {
  it("its objective's gradient is the finite differences' (central, step 1e-6)", () => {
    const random = seededRandom(3);
    const n = 40;
    const hidden = 3;
    const input = {
      x: Float64Array.from({ length: n * WIDTH }, () => normalDraw(random)),
      width: WIDTH,
      labels: Int32Array.from({ length: n }, () => Math.floor(random() * K)),
      zStatic: Float64Array.from({ length: n * K }, () => normalDraw(random)),
      zDyn: Float64Array.from({ length: n * K }, () => 2 * normalDraw(random)),
      classCount: K,
    };
    const loss = gateTargetLoss(input, hidden, 0.01);
    const count = hidden * WIDTH + 2 * hidden + 2;
    const params = Float64Array.from({ length: count }, () => 0.3 * normalDraw(random));
    const gradient = new Float64Array(count);
    loss(params, gradient);
    const scratch = new Float64Array(count);
    let worst = 0;
    for (let p = 0; p < count; p++) {
      const step = 1e-6;
      const up = Float64Array.from(params);
      const down = Float64Array.from(params);
      up[p] += step;
      down[p] -= step;
      const numeric = (loss(up, scratch) - loss(down, scratch)) / (2 * step);
      worst = Math.max(worst, Math.abs(numeric - gradient[p]!) / (1 + Math.abs(numeric)));
    }
    expect(worst).toBeLessThan(1e-5);
  });
});

describe('Knob heads on synthetic features', () => {
  const data = syntheticRows(3000, 7);
  const fit = fitKnobHeads(data, { seed: 1 });

  it('holds out a seeded fifth of the rows, deterministically', () => {
    expect(fit.validation.length).toBe(600);
    expect(fit.train.length + fit.validation.length).toBe(3000);
    expect(new Set([...fit.train, ...fit.validation]).size).toBe(3000);
    expect(fitKnobHeads(data, { seed: 1 }).heads.gate.w2).toEqual(fit.heads.gate.w2);
  });

  it('u* is high on clean rows and low on corrupted ones, and ranks the oracle advantage', () => {
    const figures = heldOutFigures(fit, data);
    expect(figures.meanUClean! - figures.meanUCorrupted!).toBeGreaterThan(0.3);
    expect(figures.aurocOracleAdvantage).toBeGreaterThan(0.75);
    // the fusion is no worse than the better branch by more than a point
    expect(figures.accuracyFused).toBeGreaterThan(Math.max(figures.accuracyStatic, figures.accuracyDynamic) - 0.01);
  });

  it('refuses data without clean or without corrupted frames, saying how many it has', () => {
    const clean = { ...data, severity: new Float64Array(3000) };
    expect(() => fitKnobHeads(clean, { seed: 1 })).toThrow(/100 clean and 100 corrupted .* these have \d+ and 0/);
  });
});

describe('Knob heads with image statistics', () => {
  // the corruption's own trace is in the image statistics; the features show it only as a weaker class signal
  const data = syntheticBackboneFeatures(3000, WIDTH, K, 7, 'statistics');

  it('the gate reads the statistics beside the features, and tells clean from corrupted far better with them', () => {
    const fit = fitKnobHeads(data, { seed: 1 });
    expect(fit.steps.join('\n')).toMatch(/and 7 image statistics \(mean, standard deviation, /);
    expect(fit.heads.gate.w1.length).toBe(16 * (WIDTH + 7));
    expect(fit.heads.statistics!.mean.length).toBe(7);
    // the linear heads read the features alone
    expect(fit.heads.staticHead.inputWidth).toBe(WIDTH);
    const withStatistics = heldOutFigures(fit, data);
    const blind = { ...data, statistics: null };
    const withoutStatistics = heldOutFigures(fitKnobHeads(blind, { seed: 1 }), blind);
    expect(withStatistics.meanUClean! - withStatistics.meanUCorrupted!).toBeGreaterThan(0.3);
    expect(withStatistics.meanUClean! - withStatistics.meanUCorrupted!).toBeGreaterThan(
      withoutStatistics.meanUClean! - withoutStatistics.meanUCorrupted! + 0.1,
    );
  });

  it('folded back, the network is the one fitted on the projection: u*([x, s]) = u*_fitted([x P, s])', () => {
    const random = seededRandom(12);
    const width = 20;
    const d = 5;
    const s = 7;
    const hidden = 4;
    // an orthonormal basis P (width x d), as the fit finds one
    const basis = dominantSubspace(
      Float64Array.from({ length: 60 * width }, () => normalDraw(random)),
      60,
      width,
      d,
      random,
    );
    const fitted = {
      w1: Float64Array.from({ length: hidden * (d + s) }, () => normalDraw(random)),
      b1: Float64Array.from({ length: hidden }, () => normalDraw(random)),
      w2: Float64Array.from({ length: hidden }, () => normalDraw(random)),
      b2: 0.3,
      logStaticScale: 0,
    };
    const folded = foldedOntoFeatures(fitted, basis, width, d + s);
    expect(folded.w1.length).toBe(hidden * (width + s));
    for (let trial = 0; trial < 20; trial++) {
      const x = Float64Array.from({ length: width }, () => normalDraw(random));
      const statistics = Float64Array.from({ length: s }, () => normalDraw(random));
      const projected = new Float64Array(d);
      multiplyInto(x, 1, width, basis, d, projected);
      const u = gateTargetOf(folded, Float64Array.of(...x, ...statistics), 0, width + s);
      expect(u).toBeCloseTo(gateTargetOf(fitted, Float64Array.of(...projected, ...statistics), 0, d + s), 12);
    }
  });

  it('wide features: projected, then folded back with the statistics kept after them', () => {
    const width = GATE_FULL_WIDTH + 14;
    const wide = syntheticBackboneFeatures(1000, width, K, 9, 'statistics');
    const fit = fitKnobHeads(wide, { seed: 3 });
    expect(fit.steps.join('\n')).toMatch(/their 128 dominant directions: [^)]*\) and 7 image statistics/);
    expect(fit.heads.gate.w1.length).toBe(16 * (width + 7));
    const figures = heldOutFigures(fit, wide);
    expect(figures.meanUClean! - figures.meanUCorrupted!).toBeGreaterThan(0.3);
  });
});

describe('Knob heads on wide features', () => {
  it(`reach the gate network through the features' dominant directions, and still tell clean from corrupted`, () => {
    const width = GATE_FULL_WIDTH + 14;
    const wide = syntheticBackboneFeatures(1000, width, K, 9);
    const fit = fitKnobHeads(wide, { seed: 3 });
    expect(fit.steps.join('\n')).toMatch(/their 128 dominant directions/);
    // folded back: the network reads every feature
    expect(fit.heads.gate.w1.length).toBe(16 * width);
    const figures = heldOutFigures(fit, wide);
    expect(figures.meanUClean! - figures.meanUCorrupted!).toBeGreaterThan(0.3);
  });
});

describe('the heads written into ONNX', () => {
  it("give what the card measured (knobHeadOutputs), to float32's rounding, even for features far from zero", async () => {
    // features centred at 1000 with a spread of 0.01: a float32 standardisation would be off by 1e-3
    const raw = syntheticRows(1500, 11);
    const shifted = { ...raw, features: raw.features.map((v) => 1000 + 0.01 * v) };
    const { heads } = fitKnobHeads(shifted, { seed: 2 });
    const source = buildOnnxModel({
      inputs: [{ name: 'x', shape: ['N', WIDTH] }],
      metadata: SOURCE_METADATA,
      outputs: [
        { name: 'logits', shape: ['N', K] },
        { name: 'features', shape: ['N', WIDTH] },
      ],
      nodes: [
        { op: 'Identity', inputs: ['x'], outputs: ['features'] },
        { op: 'MatMul', inputs: ['x', 'W'], outputs: ['product'] },
        { op: 'Add', inputs: ['product', 'b'], outputs: ['logits'] },
      ],
      initializers: [
        { name: 'W', dims: [WIDTH, K], values: new Float32Array(WIDTH * K).fill(0.1) },
        { name: 'b', dims: [K], values: new Float32Array(K) },
      ],
    });
    const written = knobModelWithHeads(source, 'test model', heads, {
      training: {},
      featuresLayer: 'x',
      input: null,
      labels: null,
    });
    // nothing known beyond the source's own metadata: kept as it was
    expect(metadataOf(written)).toMatchObject(SOURCE_METADATA);
    const session = await ort.InferenceSession.create(written);
    const rows = 200;
    const result = await session.run({
      x: new ort.Tensor('float32', shifted.features.subarray(0, rows * WIDTH), [rows, WIDTH]),
    });
    expect(session.outputNames).toEqual(['z_static', 'z_dyn', 'u_ref', 'features']);
    const expected = knobHeadOutputs(
      heads,
      shifted,
      Int32Array.from({ length: rows }, (_, i) => i),
    );
    expectOutputsOfHeads(result, expected);
    await session.release();
  });

  it('keep the input spec and labels the model ran under (a sidecar beside the original): the given ones replace its own', () => {
    const heads = fitKnobHeads(syntheticRows(600, 12), { seed: 4 }).heads;
    const source = buildOnnxModel({
      inputs: [{ name: 'x', shape: ['N', WIDTH] }],
      outputs: [
        { name: 'logits', shape: ['N', K] },
        { name: 'features', shape: ['N', WIDTH] },
      ],
      nodes: [
        { op: 'Identity', inputs: ['x'], outputs: ['features'] },
        { op: 'Identity', inputs: ['x'], outputs: ['logits'] },
      ],
      initializers: [],
      metadata: SOURCE_METADATA,
    });
    const input = { ...JSON.parse(SOURCE_METADATA['knob.input']), mean: [0.5], std: [0.25] };
    const labels = Array.from({ length: K }, (_, k) => `from the sidecar ${k}`);
    const metadata = metadataOf(
      knobModelWithHeads(source, 'test model', heads, { training: {}, featuresLayer: 'x', input, labels }),
    );
    expect(JSON.parse(metadata['knob.input']!)).toEqual(input);
    expect(JSON.parse(metadata['knob.labels']!)).toEqual(labels);
    expect(metadata['source.note']).toBe(SOURCE_METADATA['source.note']);
    // each key once
    expect(
      parseOnnxModel(
        knobModelWithHeads(source, 'm', heads, { training: {}, featuresLayer: 'x', input, labels }),
        'm',
      ).metadataProps.filter((p) => p.key === 'knob.labels'),
    ).toHaveLength(1);
    expect(() =>
      knobModelWithHeads(source, 'test model', heads, { training: {}, featuresLayer: 'x', input, labels: ['one'] }),
    ).toThrow(/1 labels for heads of/);
  });
});

/** A source model's own metadata: its spec and labels, and a property of its own. */
const SOURCE_METADATA: Record<string, string> = {
  'knob.input': JSON.stringify({
    name: 'x',
    layout: 'NCHW',
    width: 1,
    height: 1,
    channels: 1,
    value_range: [0, 1],
    mean: [0],
    std: [1],
  }),
  'knob.labels': JSON.stringify(Array.from({ length: K }, (_, k) => `own ${k}`)),
  'source.note': 'kept',
};

function metadataOf(bytes: Uint8Array): Record<string, string> {
  return Object.fromEntries(parseOnnxModel(bytes, 'written').metadataProps.map((p) => [p.key, p.value]));
}
