/**
 * Every output calibrator as ONNX nodes (src-main/core/deploy/calibrator-graph.ts), run in
 * onnxruntime-node, against the app's own calibrator (output-calibrator.ts) on the same float64
 * logits: fitted on seeded synthetic data, within 1e-9 on the probabilities (both compute in
 * float64), 1e-7 for the feature methods (the graph's squared distances |q|^2 - 2 q.b + |b|^2 are
 * about 1e-16 where the app's are 0, a frame against its own bank row, and the square root makes
 * that 1e-8). The step-graph integration test checks the whole graph on the real model. Then the
 * binned maps' ties: a probability exactly on an edge (p = 1/2, p = 1, p = 0 after underflow, and a
 * Platt output on the clip plateau of 1e-12) lands in the bin the app's locateBin gives it, under
 * each edge rule.
 */
import { describe, expect, it } from 'vitest';
import { plattAt } from '../../src-shared/calibrators/platt-scaling';
import {
  calibrateLogits,
  CALIBRATION_METHODS,
  fitCalibrator,
  needsConditions,
  needsFeatures,
  type CalibratorSpec,
} from '../../src-shared/calibrators/output-calibrator';
import { SCORE_EPS } from '../../src-shared/calibrators/binary-scores';
import { runCalibratorGraph } from '../support/calibrator-graph-harness';

const K = 4;
const ROWS = 300;
const WIDTH = 6;

function seeded(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 16807) % 2147483647) / 2147483647;
}

/** Logits with a spread of confidence, labels that follow the top class 70 % of the time, features by class. */
function syntheticData() {
  const random = seeded(11);
  const logits = Float64Array.from({ length: ROWS * K }, () => (random() - 0.5) * 10);
  const labels = Int32Array.from({ length: ROWS }, (_, i) => {
    let best = 0;
    for (let c = 1; c < K; c++) if (logits[i * K + c]! > logits[i * K + best]!) best = c;
    return random() < 0.7 ? best : Math.floor(random() * K);
  });
  const values = Float32Array.from({ length: ROWS * WIDTH }, (_, at) => {
    const label = labels[Math.floor(at / WIDTH)]!;
    return (at % WIDTH === label ? 2 : 0) + random() - 0.5;
  });
  return { logits, labels, features: { width: WIDTH, values } };
}

const probabilities = (logProbabilities: Float64Array) => {
  const out = new Float64Array(logProbabilities.length);
  for (let o = 0; o < out.length; o += K) {
    let max = -Infinity;
    for (let c = 0; c < K; c++) max = Math.max(max, logProbabilities[o + c]!);
    let sum = 0;
    for (let c = 0; c < K; c++) sum += Math.exp(logProbabilities[o + c]! - max);
    for (let c = 0; c < K; c++) out[o + c] = Math.exp(logProbabilities[o + c]! - max) / sum;
  }
  return out;
};

const topLabels = (rows: Float64Array) =>
  Array.from({ length: rows.length / K }, (_, i) => {
    let best = 0;
    for (let c = 1; c < K; c++) if (rows[i * K + c]! > rows[i * K + best]!) best = c;
    return best;
  });

const worstDifference = (a: Float64Array, b: Float64Array) =>
  a.reduce((worst, value, i) => Math.max(worst, Math.abs(value - b[i]!)), 0);

describe('each calibrator folded into ONNX', () => {
  const data = syntheticData();
  for (const method of CALIBRATION_METHODS)
    it(`${method}: the graph's probabilities are the app's`, async () => {
      const features = needsFeatures(method) ? data.features : null;
      // the condition-aware calibrator's conditions: two groups of classes, which the features tell apart
      const conditions = needsConditions(method)
        ? { names: ['first classes', 'last classes'], codes: data.labels.map((y) => (y < K / 2 ? 0 : 1)) }
        : null;
      const { spec } = fitCalibrator(method, data.logits, data.labels, K, features, undefined, conditions);
      const app = probabilities(calibrateLogits(spec, data.logits, K, features));
      const graph = probabilities(await runCalibratorGraph(spec, data.logits, K, features));
      expect(worstDifference(graph, app)).toBeLessThan(features === null ? 1e-9 : 1e-7);
      // and the same top-1 on every row (ProCal's floor keeps it where a shift would tie it)
      expect(topLabels(graph)).toEqual(topLabels(app));
      // the calibrator did something: a test of the identity would prove little
      expect(worstDifference(app, probabilities(data.logits))).toBeGreaterThan(1e-3);
    });
});

describe('binned maps read a value on an edge as the app does', () => {
  // rows of K = 2: p = (1/2, 1/2) exactly; p = (~4e-18, 1); p = (0, 1) after underflow; and between
  const logits = Float64Array.of(0, 0, 0, 40, 0, 800, 0.3, -0.2, -2, 1);
  const k = 2;
  const check = async (spec: CalibratorSpec) => {
    const app = calibrateLogits(spec, logits, k);
    const graph = await runCalibratorGraph(spec, logits, k);
    expect(Array.from(graph)).toEqual(Array.from(app).map((v) => expect.closeTo(v, 12)));
  };
  // inner edges at exactly 0.5 and 1 (and 0, where underflowed probabilities sit), one 1e-9 below 1
  // (outside the 1e-12 window in which the graph reads a value as on an edge); bin values unequal
  const edges = [0, 0.5, 1 - 2 ** -30, 1, 1];
  const values = [0.1, 0.3, 0.6, 0.9];

  for (const edgeRule of ['right-closed', 'left-closed', 'one-in-extra-bin'] as const)
    it(`histogram binning, ${edgeRule}`, async () => {
      const perClass = [0, 1].map(() => ({
        edges: [0, 0, ...edges.slice(1)],
        values: edgeRule === 'one-in-extra-bin' ? [0.05, ...values, 0.95] : [0.05, ...values],
      }));
      await check({ method: 'histogram-binning', edgeRule, perClass });
    });

  it("histogram binning with every edge on a probability the app computes, which the graph's softmax rounds its own way", async () => {
    // onnxruntime's exp and V8's differ in the last bit for some arguments: with edges at the app's
    // own probabilities, some of the graph's land a bit beside them
    const random = seeded(5);
    const rows = 400;
    const z = Float64Array.from({ length: rows * k }, () => (random() - 0.5) * 16);
    const p0 = Array.from({ length: rows }, (_, i) => 1 / (1 + Math.exp(z[i * k + 1]! - z[i * k]!)));
    const app = calibrateLogits({ method: 'temperature', temperature: 1 }, z, k);
    const own = Array.from({ length: rows }, (_, i) => Math.exp(app[i * k]!));
    const inner = [...new Set(own)].sort((a, b) => a - b);
    const perClass = [0, 1].map(() => ({
      edges: [0, ...inner, 1],
      values: Array.from({ length: inner.length + 1 }, (_, b) => (b + 1) / (inner.length + 2)),
    }));
    const spec: CalibratorSpec = { method: 'histogram-binning', edgeRule: 'right-closed', perClass };
    const expected = calibrateLogits(spec, z, k);
    const graph = await runCalibratorGraph(spec, z, k);
    expect(p0.length).toBe(rows);
    expect(worstDifference(graph, expected)).toBeLessThan(1e-12);
  });

  it('isotonic maps of one point each (a constant map) read their one value', async () => {
    const perClass = [0.3, 0.9].map((y) => ({ x: [0.5], y: [y] }));
    await check({ method: 'isotonic', perClass });
  });

  it('scaling-binning with an edge on the Platt output of the clipped score', async () => {
    const platt = { a: 0.9, b: -0.3 };
    const plateau = plattAt(platt, SCORE_EPS);
    const top = plattAt(platt, 1 - SCORE_EPS);
    const perClass = [0, 1].map(() => ({
      platt,
      edges: [0, plateau, plattAt(platt, 0.5), top, 1],
      values: [0.02, 0.2, 0.7, 0.99],
    }));
    await check({ method: 'scaling-binning', perClass });
  });
});
