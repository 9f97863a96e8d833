/**
 * The L-BFGS line search's backtracking (src-shared/calibrators/lbfgs.ts): after a failed Armijo
 * test the next trial step is the minimiser of the quadratic through phi(0), phi'(0) and
 * phi(step) (Nocedal & Wright, eq. 3.58), kept within [0.1, 0.5] of the failed step; half of it
 * where the trial value is not finite. And the minimiser still finds what it found: a convex
 * quadratic's minimum, and the minimum of a function whose first directions are far too long.
 */
import { describe, expect, it } from 'vitest';
import { minimizeLbfgs, shorterStep } from '../../src-shared/calibrators/lbfgs';

describe('the line search after a failed Armijo test', () => {
  it("steps to the quadratic's minimiser when it lies within [0.1, 0.5] of the failed step", () => {
    // phi(a) = 3 (a - 0.3)^2 - 0.27: phi(0) = 0, phi'(0) = -1.8, minimiser 0.3; the failed step 1
    const phi = (a: number) => 3 * (a - 0.3) ** 2 - 0.27;
    expect(shorterStep(1, phi(0), -1.8, phi(1))).toBeCloseTo(0.3, 14);
    // from step 0.8 the minimiser 0.3 is 0.375 of it
    expect(shorterStep(0.8, phi(0), -1.8, phi(0.8))).toBeCloseTo(0.3, 14);
  });

  it('keeps the step within [0.1, 0.5] of the failed one', () => {
    // the minimiser 1e-6 of a step of 1: a tenth of it, not a millionth
    const steep = (a: number) => (a - 1e-6) ** 2 - 1e-12;
    expect(shorterStep(1, steep(0), -2e-6, steep(1))).toBe(0.1);
    // a trial value just above the Armijo line (-2e-4 at step 2): the minimiser a hair past half
    // the step (1.00005), clamped to half
    expect(shorterStep(2, 0, -1, -1e-4)).toBe(1);
  });

  it('halves the step where the trial value is not finite', () => {
    expect(shorterStep(1, 0, -1, Infinity)).toBe(0.5);
    expect(shorterStep(1, 0, -1, Number.NaN)).toBe(0.5);
    // a NaN slope or value makes the minimiser NaN: halved, not NaN
    expect(shorterStep(1, 0, Number.NaN, 1)).toBe(0.5);
    expect(shorterStep(1, Number.NaN, -1, 1)).toBe(0.5);
  });

  it('the minimiser still converges on a badly scaled convex quadratic and on Rosenbrock', () => {
    const scales = [1, 10, 100, 1000];
    const quadratic = (x: Float64Array, g: Float64Array) => {
      let f = 0;
      for (let i = 0; i < x.length; i++) {
        f += 0.5 * scales[i]! * (x[i]! - i) ** 2;
        g[i] = scales[i]! * (x[i]! - i);
      }
      return f;
    };
    const q = minimizeLbfgs(quadratic, new Float64Array(4).fill(5));
    expect(q.converged).toBe(true);
    q.x.forEach((v, i) => expect(v).toBeCloseTo(i, 7));
    const rosenbrock = (x: Float64Array, g: Float64Array) => {
      const [a, b] = [x[0]!, x[1]!];
      g[0] = -2 * (1 - a) - 400 * a * (b - a * a);
      g[1] = 200 * (b - a * a);
      return (1 - a) ** 2 + 100 * (b - a * a) ** 2;
    };
    const r = minimizeLbfgs(rosenbrock, Float64Array.of(-1.2, 1), { maxIterations: 500 });
    expect(r.converged).toBe(true);
    expect(r.x[0]).toBeCloseTo(1, 6);
    expect(r.x[1]).toBeCloseTo(1, 6);
  });
});
