import { logit, sigmoid } from './binary-scores';

/**
 * Online Platt Scaling (Gupta & Ramdas 2023), the Newton-step version of their code: logistic
 * regression on x_t = logit(s_t) fitted by online Newton steps, O(1) per sample, for live streams.
 *   predict p_t = sigma(a x_t + b), starting from (a, b) = (0, 0) (first forecast 0.5);
 *   after y_t: g = (p_t - y_t)(x_t, 1); H += g g^T (H_0 = I / (beta D)^2);
 *   (a, b) -= (1/beta) H^-1 g, H^-1 kept by Sherman-Morrison;
 *   if ||(a, b)|| > radius, project back in the H-norm (their small QP, solved here exactly by
 *   bisection on the Lagrange multiplier).
 * Defaults as coded there: beta = 0.1, D = 1, radius 100.
 */
export interface OnlinePlattOptions {
  beta?: number;
  diameter?: number;
  radius?: number;
}

export class OnlinePlattScaling {
  a = 0;
  b = 0;
  updates = 0;
  private readonly beta: number;
  private readonly radius: number;
  /** H and its inverse, 2 x 2 symmetric: [h11, h12, h22]. */
  private readonly h = new Float64Array(3);
  private readonly hInv = new Float64Array(3);

  constructor(options: OnlinePlattOptions = {}) {
    this.beta = options.beta ?? 0.1;
    const diameter = options.diameter ?? 1;
    this.radius = options.radius ?? 100;
    const h0 = 1 / (this.beta * diameter) ** 2;
    this.h.set([h0, 0, h0]);
    this.hInv.set([1 / h0, 0, 1 / h0]);
  }

  predict(score: number): number {
    return sigmoid(this.a * logit(score) + this.b);
  }

  update(score: number, outcome: number): void {
    const x = logit(score);
    const residual = sigmoid(this.a * x + this.b) - outcome;
    const g0 = residual * x;
    const g1 = residual;
    this.h[0] += g0 * g0;
    this.h[1] += g0 * g1;
    this.h[2] += g1 * g1;
    // Sherman-Morrison: (H + g g^T)^-1 = H^-1 - (H^-1 g)(H^-1 g)^T / (1 + g^T H^-1 g)
    const [i11, i12, i22] = this.hInv;
    const u0 = i11 * g0 + i12 * g1;
    const u1 = i12 * g0 + i22 * g1;
    const denominator = 1 + g0 * u0 + g1 * u1;
    this.hInv[0] = i11 - (u0 * u0) / denominator;
    this.hInv[1] = i12 - (u0 * u1) / denominator;
    this.hInv[2] = i22 - (u1 * u1) / denominator;
    const step0 = this.hInv[0] * g0 + this.hInv[1] * g1;
    const step1 = this.hInv[1] * g0 + this.hInv[2] * g1;
    this.a -= step0 / this.beta;
    this.b -= step1 / this.beta;
    if (Math.hypot(this.a, this.b) > this.radius) this.project();
    this.updates++;
  }

  /** argmin_{||v|| <= R} (v - w)^T H (v - w): v(lambda) = (H + lambda I)^-1 H w, ||v(lambda)|| = R. */
  private project(): void {
    const [h11, h12, h22] = this.h;
    const hw0 = h11 * this.a + h12 * this.b;
    const hw1 = h12 * this.a + h22 * this.b;
    const at = (lambda: number): [number, number] => {
      const m11 = h11 + lambda;
      const m22 = h22 + lambda;
      const det = m11 * m22 - h12 * h12;
      return [(m22 * hw0 - h12 * hw1) / det, (m11 * hw1 - h12 * hw0) / det];
    };
    let lo = 0;
    let hi = 1;
    while (Math.hypot(...at(hi)) > this.radius) hi *= 2;
    for (let i = 0; i < 200; i++) {
      const mid = 0.5 * (lo + hi);
      if (Math.hypot(...at(mid)) > this.radius) lo = mid;
      else hi = mid;
    }
    [this.a, this.b] = at(hi);
  }
}

/**
 * Calibeating by tracking (Foster & Hart; as in Gupta & Ramdas' code): the OPS forecasts are put
 * into 10 fixed bins, and the calibeated forecast is the running mean of the outcomes seen so far
 * in the forecast's bin, seeded with one pseudo-observation at the bin's upper end.
 */
export class TrackingCalibeating {
  readonly ops: OnlinePlattScaling;
  private readonly sums = new Float64Array(10);
  private readonly counts = new Float64Array(10);

  constructor(options: OnlinePlattOptions = {}) {
    this.ops = new OnlinePlattScaling(options);
    for (let b = 0; b < 10; b++) {
      this.sums[b] = (b + 1) / 10;
      this.counts[b] = 1;
    }
  }

  private bin(p: number): number {
    return Math.min(9, Math.floor(p * 10));
  }

  /** Both forecasts for a score, before its outcome is known. */
  predict(score: number): { ops: number; calibeated: number } {
    const ops = this.ops.predict(score);
    const b = this.bin(ops);
    return { ops, calibeated: this.sums[b] / this.counts[b] };
  }

  update(score: number, outcome: number): void {
    const b = this.bin(this.ops.predict(score));
    this.sums[b] += outcome;
    this.counts[b] += 1;
    this.ops.update(score, outcome);
  }
}
