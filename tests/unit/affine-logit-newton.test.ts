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

/** ODIR's penalty (Kull et al. 2019) per parameter (W row-major, then b), written out from its definition. */
function odir(k: number, lambda: number, mu: number): AffinePenalty {
  const weights = new Float64Array(k * k + k);
  const centres = new Float64Array(k * k + k);
  for (let r = 0; r < k; r++) {
    for (let c = 0; c < k; c++) weights[r * k + c] = r === c ? 0 : (2 * lambda) / (k * (k - 1));
    weights[k * k + r] = (2 * mu) / k;
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
  const theta = [...weights, ...bias];
  theta.forEach((t, j) => (value += (penalty.weights[j]! / 2) * (t - penalty.centres[j]!) ** 2));
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

  it('converges in a few steps on ln p under a weak or a strong ODIR penalty; Dirichlet calibration fits by it', () => {
    const k = 10;
    const { logits, labels } = miscalibrated(1500, k, 11);
    const inputs = logProbabilities(logits, k);
    for (const lambda of [1e-4, 1e-1]) {
      const fit = fitAffineByNewton(inputs, labels, k, odir(k, lambda, lambda));
      expect(fit.converged, `lambda ${lambda}`).toBe(true);
      expect(fit.iterations, `lambda ${lambda}`).toBeLessThanOrEqual(30);
    }
    // Dirichlet calibration's final fit converges (L-BFGS, finished by Newton where it has not)
    const dirichlet = fitDirichlet(logits, labels, k);
    expect(dirichlet.report.method).toMatch(/ODIR/);
    expect(dirichlet.report.converged).toBe(true);
  });

  it("reaches L-BFGS's optimum where both run; where it cannot finish, the app's fit still does", () => {
    // 4,000 rows of 10 classes is past Newton's budget: fitAffineLogitScaling runs L-BFGS there
    const k = 10;
    const { logits, labels } = miscalibrated(4000, k, 13);
    const inputs = logProbabilities(logits, k);
    const byLbfgs = fitAffineLogitScaling('matrix', inputs, labels, k, { offDiagonal: 1e-2, intercept: 1e-2 });
    expect(byLbfgs.report.method).toMatch(/\(L-BFGS, ODIR/);
    expect(byLbfgs.report.converged).toBe(true);
    const byNewton = fitAffineByNewton(inputs, labels, k, odir(k, 1e-2, 1e-2));
    expect(byNewton.converged).toBe(true);
    expect(Math.abs(byNewton.value - byLbfgs.report.objective)).toBeLessThan(1e-9);
    expect(byNewton.value).toBeLessThanOrEqual(byLbfgs.report.objective + 1e-15);
    // logits thousands apart saturate the softmax: the Hessian is singular in floating point and
    // Newton's method alone stops unconverged; the fit as the app runs it still converges
    const saturated = miscalibrated(200, 3, 17);
    const wide = logProbabilities(
      saturated.logits.map((z) => z * 3000),
      3,
    );
    const newtonAlone = fitAffineByNewton(wide, saturated.labels, 3, odir(3, 1e-3, 1e-3));
    expect(newtonAlone.converged).toBe(false);
    const fit = fitAffineLogitScaling('matrix', wide, saturated.labels, 3, { offDiagonal: 1e-3, intercept: 1e-3 });
    expect(fit.report.converged).toBe(true);
    expect(fit.report.objective).toBeLessThan(newtonAlone.value);
  });

  it('an L-BFGS fit started from its own optimum stays there', () => {
    const { logits, labels } = miscalibrated(2000, 5, 19);
    const first = fitAffineLogitScaling('vector', logits, labels, 5);
    const again = fitAffineLogitScaling('vector', logits, labels, 5, 0, undefined, first.params);
    expect(again.report.iterations).toBeLessThanOrEqual(1);
    expect(again.report.objective).toBeCloseTo(first.report.objective, 12);
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
    expect(fitAffineLogitScaling('matrix', logits, labels, 3).report.converged).toBe(true);
  });
});
