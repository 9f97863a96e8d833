/**
 * Matrix scaling and Dirichlet calibration by Newton's method (affine-logit-newton.ts): the point
 * it returns is the objective's minimiser, checked against an objective written here from its
 * definition (mean NLL of softmax(W x + b) plus the penalty) by finite differences, not against the
 * fit's own gradient; it converges where L-BFGS stopped at its cap (ln p inputs, weak ODIR), and it
 * is only used where the objective is strictly convex and the Hessian affordable.
 */
import { describe, expect, it } from 'vitest';
import { fitAffineByNewton, newtonApplies, type AffinePenalty } from '../../src-shared/calibrators/affine-logit-newton';
import { fitAffineLogitScaling } from '../../src-shared/calibrators/affine-logit-scaling';
import { fitDirichlet } from '../../src-shared/calibrators/dirichlet-calibration';
import { logSumExpRow } from '../../src-shared/fusion/logits';
import { syntheticClassifier } from '../support/synthetic-classifier';

/** Logits of an overconfident k-class model (its labels drawn at temperature 1.5) and the labels. */
const miscalibrated = (n: number, k: number, seed: number) =>
  syntheticClassifier({ n, classCount: k, temperature: 1.5, scale: 3, seed });

function logProbabilities(logits: Float64Array, k: number): Float64Array {
  const out = new Float64Array(logits.length);
  for (let o = 0; o < logits.length; o += k) {
    const lse = logSumExpRow(logits, o, k);
    for (let c = 0; c < k; c++) out[o + c] = logits[o + c]! - lse;
  }
  return out;
}

/** ODIR's penalty (Kull et al. 2019) in the [W | b] layout, written out from its definition. */
function odir(k: number, lambda: number, mu: number): AffinePenalty {
  const width = k + 1;
  const weights = new Float64Array(k * width);
  const centres = new Float64Array(k * width);
  for (let r = 0; r < k; r++)
    for (let c = 0; c <= k; c++) {
      if (c === r) centres[r * width + c] = 1;
      weights[r * width + c] = c === k ? (2 * mu) / k : c === r ? 0 : (2 * lambda) / (k * (k - 1));
    }
  return { weights, centres };
}

/** The objective at W, b from its definition, in plain arithmetic. */
function objective(
  weights: Float64Array,
  bias: Float64Array,
  inputs: Float64Array,
  labels: Int32Array,
  k: number,
  penalty: AffinePenalty,
): number {
  let nll = 0;
  for (let i = 0; i < labels.length; i++) {
    const row = Array.from({ length: k }, (_, r) => {
      let v = bias[r]!;
      for (let c = 0; c < k; c++) v += weights[r * k + c]! * inputs[i * k + c]!;
      return v;
    });
    const max = Math.max(...row);
    nll += max + Math.log(row.reduce((s, v) => s + Math.exp(v - max), 0)) - row[labels[i]!]!;
  }
  let value = nll / labels.length;
  for (let r = 0; r < k; r++)
    for (let c = 0; c <= k; c++) {
      const j = r * (k + 1) + c;
      const theta = c === k ? bias[r]! : weights[r * k + c]!;
      value += (penalty.weights[j]! / 2) * (theta - penalty.centres[j]!) ** 2;
    }
  return value;
}

describe("matrix scaling by Newton's method", () => {
  it('returns the minimiser: every central difference of the objective there is zero', () => {
    const k = 4;
    const { logits, labels } = miscalibrated(600, k, 3);
    const inputs = logProbabilities(logits, k);
    const penalty = odir(k, 1e-3, 1e-3);
    const fit = fitAffineByNewton(inputs, labels, k, penalty);
    expect(fit.converged).toBe(true);
    expect(fit.value).toBeCloseTo(objective(fit.weights, fit.bias, inputs, labels, k, penalty), 12);
    const h = 1e-5;
    for (let j = 0; j < k * k + k; j++) {
      const moved = (delta: number) => {
        const w = Float64Array.from(fit.weights);
        const b = Float64Array.from(fit.bias);
        if (j < k * k) w[j]! += delta;
        else b[j - k * k]! += delta;
        return objective(w, b, inputs, labels, k, penalty);
      };
      expect(Math.abs((moved(h) - moved(-h)) / (2 * h)), `parameter ${j}`).toBeLessThan(1e-7);
    }
  });

  it('converges in a few steps on ln p under a weak or a strong ODIR penalty, and so does each Dirichlet fit', () => {
    const k = 10;
    const { logits, labels } = miscalibrated(1500, k, 11);
    const inputs = logProbabilities(logits, k);
    for (const lambda of [1e-4, 1e-1]) {
      const fit = fitAffineByNewton(inputs, labels, k, odir(k, lambda, lambda));
      expect(fit.converged, `lambda ${lambda}`).toBe(true);
      expect(fit.iterations, `lambda ${lambda}`).toBeLessThanOrEqual(30);
    }
    // Dirichlet calibration fits by Newton and says so; every fit of its cross-validation converged
    const dirichlet = fitDirichlet(logits, labels, k);
    expect(dirichlet.report.method).toMatch(/Newton, ODIR/);
    expect(dirichlet.report.converged).toBe(true);
  });

  it('is used only where the objective is strictly convex and the Hessian affordable', () => {
    expect(newtonApplies(1000, 10, odir(10, 1e-3, 1e-3))).toBe(true);
    // no penalty on the intercepts: the NLL is flat along "add c to every bias"
    expect(newtonApplies(1000, 10, odir(10, 1e-3, 0))).toBe(false);
    expect(newtonApplies(1000, 10, odir(10, 0, 1e-3))).toBe(false);
    // a thousand classes: a million parameters; 30 classes on 100,000 rows: too much work a step
    expect(newtonApplies(1000, 1000, odir(1000, 1e-3, 1e-3))).toBe(false);
    expect(newtonApplies(100_000, 20, odir(20, 1e-3, 1e-3))).toBe(false);
    // unregularised matrix scaling keeps L-BFGS
    const { logits, labels } = miscalibrated(300, 3, 5);
    expect(fitAffineLogitScaling('matrix', logits, labels, 3, 0).report.method).toMatch(/L-BFGS/);
    expect(fitAffineLogitScaling('matrix', logits, labels, 3).report.method).toMatch(/Newton, L2 0.001/);
  });
});
