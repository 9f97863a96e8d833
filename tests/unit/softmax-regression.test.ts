/**
 * The softmax regression (src-shared/calibrators/softmax-regression.ts: the condition detector and
 * the linear heads of issue 31) against scikit-learn's LogisticRegression on the same data and
 * penalty (tests/fixtures/reference/heads, its provenance in tests/fixtures/PROVENANCE.md): the
 * objective to 1e-4 and the logits, centred by row (the intercepts share a free constant), to 1e-3.
 * Then label smoothing against its definition: at the optimum the gradient of the smoothed
 * objective is zero.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fitSoftmaxRegression, softmaxRegressionScoresInto } from '../../src-shared/calibrators/softmax-regression';

interface Reference {
  provenance: string;
  rows: number;
  width: number;
  classes: number;
  inputs: number[];
  labels: number[];
  cases: Array<{ C: number; l2: number; objective: number; centredLogits: number[] }>;
}
const reference = JSON.parse(
  readFileSync('tests/fixtures/reference/heads/sklearn-logistic-regression.json', 'utf8'),
) as Reference;
const inputs = Float64Array.from(reference.inputs);
const labels = Int32Array.from(reference.labels);

describe('softmax regression against scikit-learn', () => {
  for (const { C, l2, objective, centredLogits } of reference.cases)
    it(`C = ${C}: the objective to 1e-4, the centred logits to 1e-3`, () => {
      const fit = fitSoftmaxRegression(inputs, reference.width, labels, reference.classes, {
        l2,
        gradientTolerance: 1e-10,
        maxIterations: 20_000,
      });
      expect(Math.abs(fit.objective - objective)).toBeLessThan(1e-4);
      const scores = new Float64Array(reference.classes);
      let worst = 0;
      for (let i = 0; i < reference.rows; i++) {
        softmaxRegressionScoresInto(fit.model, inputs, i * reference.width, scores);
        const mean = scores.reduce((a, b) => a + b, 0) / reference.classes;
        for (let k = 0; k < reference.classes; k++)
          worst = Math.max(worst, Math.abs(scores[k]! - mean - centredLogits[i * reference.classes + k]!));
      }
      expect(worst).toBeLessThan(1e-3);
    });
});

describe('label smoothing', () => {
  it('fits the smoothed targets: the gradient of their mean cross-entropy plus the penalty is zero', () => {
    const smoothing = 0.1;
    const l2 = 1e-3;
    const { width, classes: c, rows } = reference;
    const fit = fitSoftmaxRegression(inputs, width, labels, c, {
      l2,
      labelSmoothing: smoothing,
      gradientTolerance: 1e-10,
      maxIterations: 20_000,
    });
    const gradient = new Float64Array(c * width + c);
    const scores = new Float64Array(c);
    for (let i = 0; i < rows; i++) {
      softmaxRegressionScoresInto(fit.model, inputs, i * width, scores);
      const max = Math.max(...scores);
      const sum = scores.reduce((s, v) => s + Math.exp(v - max), 0);
      for (let k = 0; k < c; k++) {
        const residual = Math.exp(scores[k]! - max) / sum - ((k === labels[i] ? 1 - smoothing : 0) + smoothing / c);
        gradient[c * width + k] += residual / rows;
        for (let j = 0; j < width; j++) gradient[k * width + j] += (residual * inputs[i * width + j]!) / rows;
      }
    }
    for (let p = 0; p < c * width; p++) gradient[p] += l2 * fit.model.weights[p]!;
    for (const g of gradient) expect(Math.abs(g)).toBeLessThan(1e-7);
    // smoothing keeps the scores from growing as the data separates: smaller weights than without it
    const plain = fitSoftmaxRegression(inputs, width, labels, c, {
      l2,
      gradientTolerance: 1e-10,
      maxIterations: 20_000,
    });
    const norm = (w: Float64Array) => Math.sqrt(w.reduce((s, v) => s + v * v, 0));
    expect(norm(fit.model.weights)).toBeLessThan(norm(plain.model.weights));
  });

  it('refuses labels outside the classes and a smoothing of 1, by name', () => {
    expect(() => fitSoftmaxRegression(Float64Array.of(1, 2), 1, Int32Array.of(0, 3), 2, { l2: 0 })).toThrow(
      /label 3 is outside 0..1/,
    );
    expect(() =>
      fitSoftmaxRegression(Float64Array.of(1, 2), 1, Int32Array.of(0, 1), 2, { l2: 0, labelSmoothing: 1 }),
    ).toThrow(/label smoothing in \[0, 1\)/);
  });
});

describe('soft targets (distillation)', () => {
  const { width, classes: c, rows } = reference;
  /** A teacher that is itself a softmax regression: its probabilities are the targets. */
  const teacher = {
    weights: Float64Array.from({ length: c * width }, (_, p) => Math.sin(p + 1)),
    bias: Float64Array.from({ length: c }, (_, k) => 0.1 * k),
    classCount: c,
    inputWidth: width,
  };
  const targets = new Float64Array(rows * c);
  const scores = new Float64Array(c);
  for (let i = 0; i < rows; i++) {
    softmaxRegressionScoresInto(teacher, inputs, i * width, scores);
    const max = Math.max(...scores);
    const sum = scores.reduce((s, v) => s + Math.exp(v - max), 0);
    for (let k = 0; k < c; k++) targets[i * c + k] = Math.exp(scores[k]! - max) / sum;
  }

  it('recovers a softmax-regression teacher without a penalty: its probabilities on every row, to 1e-4', () => {
    const fit = fitSoftmaxRegression(inputs, width, labels, c, {
      l2: 0,
      softTargets: targets,
      gradientTolerance: 1e-10,
      maxIterations: 20_000,
    });
    let worst = 0;
    for (let i = 0; i < rows; i++) {
      softmaxRegressionScoresInto(fit.model, inputs, i * width, scores);
      const max = Math.max(...scores);
      const sum = scores.reduce((s, v) => s + Math.exp(v - max), 0);
      for (let k = 0; k < c; k++)
        worst = Math.max(worst, Math.abs(Math.exp(scores[k]! - max) / sum - targets[i * c + k]!));
    }
    expect(worst).toBeLessThan(1e-4);
  });

  it('one-hot soft targets fit what the labels fit', () => {
    const oneHot = new Float64Array(rows * c);
    labels.forEach((y, i) => (oneHot[i * c + y] = 1));
    const options = { l2: 1e-3, gradientTolerance: 1e-9, maxIterations: 5000 };
    const soft = fitSoftmaxRegression(inputs, width, labels, c, { ...options, softTargets: oneHot });
    const hard = fitSoftmaxRegression(inputs, width, labels, c, options);
    expect(soft.objective).toBeCloseTo(hard.objective, 12);
    expect(Array.from(soft.model.weights)).toEqual(Array.from(hard.model.weights));
  });

  it('refuses rows that are not probabilities, and smoothing beside them, by row', () => {
    const bad = Float64Array.from(targets);
    bad[3 * c] += 0.5;
    expect(() => fitSoftmaxRegression(inputs, width, labels, c, { l2: 0, softTargets: bad })).toThrow(
      /soft targets of row 3 sum to 1\.5/,
    );
    expect(() =>
      fitSoftmaxRegression(inputs, width, labels, c, { l2: 0, softTargets: targets, labelSmoothing: 0.1 }),
    ).toThrow(/without label smoothing/);
    expect(() => fitSoftmaxRegression(inputs, width, labels, c, { l2: 0, softTargets: targets.subarray(1) })).toThrow(
      /must be \d+ rows of \d+ probabilities/,
    );
  });
});
