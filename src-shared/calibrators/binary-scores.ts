/**
 * Calibrators for binary or top-label scores work on (score s_i in [0, 1], outcome y_i in {0, 1});
 * for a multiclass model that is (confidence, correct). Scores are clipped to [EPS, 1 - EPS] before
 * logits and logs, so s = 0 or 1 stays finite.
 */
export const SCORE_EPS = 1e-12;

export function clipScore(s: number): number {
  return s < SCORE_EPS ? SCORE_EPS : s > 1 - SCORE_EPS ? 1 - SCORE_EPS : s;
}

export function logit(s: number): number {
  const c = clipScore(s);
  return Math.log(c / (1 - c));
}

export function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

/**
 * Logistic regression sigma(w . f_i) on d features by Newton's method (d small), with optional
 * targets other than 0/1 (Platt's smoothed targets). Returns the weights, mean log loss, iterations.
 */
export function fitLogistic(
  features: Float64Array,
  dimension: number,
  targets: Float64Array,
  maxIterations = 100,
): { weights: Float64Array; loss: number; iterations: number; converged: boolean } {
  const n = targets.length;
  const d = dimension;
  const w = new Float64Array(d);
  const gradient = new Float64Array(d);
  const hessian = new Float64Array(d * d);
  let iterations = 0;
  let converged = false;
  const lossAt = (weights: Float64Array): number => {
    let loss = 0;
    for (let i = 0; i < n; i++) {
      let z = 0;
      for (let j = 0; j < d; j++) z += weights[j] * features[i * d + j];
      // log(1 + e^z) - t z, stably
      loss += (z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z))) - targets[i] * z;
    }
    return loss / n;
  };
  let loss = lossAt(w);
  for (; iterations < maxIterations; iterations++) {
    gradient.fill(0);
    hessian.fill(0);
    for (let i = 0; i < n; i++) {
      let z = 0;
      for (let j = 0; j < d; j++) z += w[j] * features[i * d + j];
      const p = sigmoid(z);
      const r = p - targets[i];
      const v = p * (1 - p);
      for (let a = 0; a < d; a++) {
        gradient[a] += r * features[i * d + a];
        for (let b = 0; b < d; b++) hessian[a * d + b] += v * features[i * d + a] * features[i * d + b];
      }
    }
    for (let a = 0; a < d; a++) hessian[a * d + a] += 1e-12 * n;
    const step = solveSymmetric(hessian, gradient, d);
    // damped Newton: halve until the loss does not increase
    let scale = 1;
    const trial = new Float64Array(d);
    let trialLoss = Infinity;
    for (let tries = 0; tries < 50; tries++) {
      for (let j = 0; j < d; j++) trial[j] = w[j] - scale * step[j];
      trialLoss = lossAt(trial);
      if (trialLoss <= loss + 1e-15) break;
      scale /= 2;
    }
    let change = 0;
    for (let j = 0; j < d; j++) change = Math.max(change, Math.abs(trial[j] - w[j]));
    w.set(trial);
    loss = Math.min(loss, trialLoss);
    if (change < 1e-12 * Math.max(1, ...Array.from(w, Math.abs))) {
      converged = true;
      iterations++;
      break;
    }
  }
  return { weights: w, loss, iterations, converged };
}

/** Solves H x = g for a small symmetric positive definite H (Gaussian elimination, partial pivoting). */
export function solveSymmetric(h: Float64Array, g: Float64Array, d: number): Float64Array {
  const a = Float64Array.from(h);
  const x = Float64Array.from(g);
  for (let col = 0; col < d; col++) {
    let pivot = col;
    for (let r = col + 1; r < d; r++) if (Math.abs(a[r * d + col]) > Math.abs(a[pivot * d + col])) pivot = r;
    if (pivot !== col) {
      for (let c = 0; c < d; c++) [a[col * d + c], a[pivot * d + c]] = [a[pivot * d + c], a[col * d + c]];
      [x[col], x[pivot]] = [x[pivot], x[col]];
    }
    const p = a[col * d + col] || 1e-300;
    for (let r = col + 1; r < d; r++) {
      const f = a[r * d + col] / p;
      for (let c = col; c < d; c++) a[r * d + c] -= f * a[col * d + c];
      x[r] -= f * x[col];
    }
  }
  for (let r = d - 1; r >= 0; r--) {
    let v = x[r];
    for (let c = r + 1; c < d; c++) v -= a[r * d + c] * x[c];
    x[r] = v / (a[r * d + r] || 1e-300);
  }
  return x;
}
