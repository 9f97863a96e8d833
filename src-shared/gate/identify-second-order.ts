import { KnobError } from '../errors';
import type { GateDiscretization } from './gate-settings';

/**
 * Identifies the second-order gate a recording actually followed (issue 17's check that the gate
 * behaves like the system its knobs describe): from the input u (u* clamped, per frame) and the
 * gate g it produced at a constant frame interval h, the discrete model
 *   g[n+1] = a1 g[n] + a2 g[n-1] + b0 u[n+1] + b1 u[n] + b2 u[n-1]
 * is fitted by linear least squares (Householder QR). Every variant's step (step-coefficients.ts,
 * the app's convention that frame n is driven by its own input) has this form: ZOH with b2 = 0,
 * Tustin with all three input terms. The poles z of z^2 - a1 z - a2 are mapped back to s:
 * - ZOH: s = ln(z) / h;
 * - Tustin: q = (z - 1)/(z + 1), s = 2q/h; pre-warped at the (unknown) wn, tan(wn h/2) takes the
 *   place of wn h/2, so wn = (2/h) atan(sqrt(q1 q2)). zeta = -(q1 + q2) / (2 sqrt(q1 q2)) either way.
 * Then wn = sqrt(s1 s2) and zeta = -(s1 + s2) / (2 wn). On noise-free input it returns the knobs to
 * rounding; on a real stream its residual says how well the model explains the recording.
 */
export interface IdentifiedSecondOrder {
  zeta: number;
  wnRadPerSec: number;
  /** The fitted discrete poles (re, im); a conjugate pair or two real poles. */
  poles: [{ re: number; im: number }, { re: number; im: number }];
  /** a1, a2, b0, b1, b2 as defined above. */
  coefficients: [number, number, number, number, number];
  /** Root mean square of the one-step prediction error, in units of g. */
  residualRms: number;
  /** Equations fitted (frames - 2). */
  equations: number;
}

export interface IdentificationOptions {
  discretization: GateDiscretization;
  /** Tustin only: the recording's map was pre-warped at wn. */
  tustinPrewarp?: boolean;
}

const PARAMETERS = 5;

export function identifySecondOrder(
  u: ArrayLike<number>,
  g: ArrayLike<number>,
  dtSeconds: number,
  options: IdentificationOptions,
): IdentifiedSecondOrder {
  const n = g.length;
  if (u.length !== n) throw new KnobError('INVALID_INPUT', `${u.length} inputs for ${n} gate values`);
  if (!(dtSeconds > 0 && Number.isFinite(dtSeconds)))
    throw new KnobError('INVALID_INPUT', `the frame interval must be positive and finite, got ${dtSeconds}`);
  const equations = n - 2;
  if (equations < 4 * PARAMETERS)
    throw new KnobError('INVALID_INPUT', `identification needs at least ${4 * PARAMETERS + 2} frames, got ${n}`);
  for (let i = 0; i < n; i++)
    if (!Number.isFinite(u[i]!) || !Number.isFinite(g[i]!))
      throw new KnobError('INVALID_INPUT', `frame ${i}: u or g is not finite`);
  // rows k = 1 .. n-2: [g[k], g[k-1], u[k+1], u[k], u[k-1]] -> g[k+1]
  const design = new Float64Array(equations * PARAMETERS);
  const target = new Float64Array(equations);
  for (let row = 0; row < equations; row++) {
    const k = row + 1;
    design.set([g[k]!, g[k - 1]!, u[k + 1]!, u[k]!, u[k - 1]!], row * PARAMETERS);
    target[row] = g[k + 1]!;
  }
  const [a1, a2, b0, b1, b2] = leastSquares(design, target, equations, PARAMETERS);
  let squared = 0;
  for (let row = 0; row < equations; row++) {
    const k = row + 1;
    const predicted = a1! * g[k]! + a2! * g[k - 1]! + b0! * u[k + 1]! + b1! * u[k]! + b2! * u[k - 1]!;
    squared += (g[k + 1]! - predicted) ** 2;
  }
  const poles = quadraticRoots(a1!, a2!);
  const { zeta, wnRadPerSec } =
    options.discretization === 'zoh'
      ? fromZohPoles(poles, dtSeconds)
      : fromTustinPoles(poles, dtSeconds, options.tustinPrewarp ?? false);
  return {
    zeta,
    wnRadPerSec,
    poles,
    coefficients: [a1!, a2!, b0!, b1!, b2!],
    residualRms: Math.sqrt(squared / equations),
    equations,
  };
}

type Complex = { re: number; im: number };

/** The roots of z^2 - a1 z - a2. */
function quadraticRoots(a1: number, a2: number): [Complex, Complex] {
  const discriminant = a1 * a1 + 4 * a2;
  if (discriminant >= 0) {
    const root = Math.sqrt(discriminant);
    return [
      { re: (a1 + root) / 2, im: 0 },
      { re: (a1 - root) / 2, im: 0 },
    ];
  }
  const im = Math.sqrt(-discriminant) / 2;
  return [
    { re: a1 / 2, im },
    { re: a1 / 2, im: -im },
  ];
}

function noEquivalent(why: string): never {
  throw new KnobError('INVALID_INPUT', `the fitted discrete poles have no second-order equivalent: ${why}`);
}

function fromZohPoles([p, q]: [Complex, Complex], h: number): { zeta: number; wnRadPerSec: number } {
  if (p.im !== 0) {
    const r = Math.hypot(p.re, p.im);
    if (!(r < 1)) noEquivalent('the poles lie on or outside the unit circle');
    const sigma = -Math.log(r) / h;
    const wd = Math.abs(Math.atan2(p.im, p.re)) / h;
    const wn = Math.hypot(sigma, wd);
    return { zeta: sigma / wn, wnRadPerSec: wn };
  }
  if (!(p.re > 0 && q.re > 0)) noEquivalent(`a real pole at ${p.re > 0 ? q.re : p.re} is not positive`);
  const s1 = Math.log(p.re) / h;
  const s2 = Math.log(q.re) / h;
  if (!(s1 < 0 && s2 < 0)) noEquivalent('a pole lies on or outside the unit circle');
  const wn = Math.sqrt(s1 * s2);
  return { zeta: -(s1 + s2) / (2 * wn), wnRadPerSec: wn };
}

function fromTustinPoles(
  [p, q]: [Complex, Complex],
  h: number,
  prewarp: boolean,
): { zeta: number; wnRadPerSec: number } {
  // q_i = (z_i - 1)/(z_i + 1); for a conjugate pair q1 q2 = |q|^2 and q1 + q2 = 2 Re q
  const bilinear = (z: Complex): Complex => {
    const denominator = (z.re + 1) ** 2 + z.im ** 2;
    return { re: ((z.re - 1) * (z.re + 1) + z.im * z.im) / denominator, im: (2 * z.im) / denominator };
  };
  const q1 = bilinear(p);
  const q2 = bilinear(q);
  const product = q1.re * q2.re - q1.im * q2.im;
  const sum = q1.re + q2.re;
  if (!(product > 0 && sum < 0)) noEquivalent('the poles are not both in the open left half-plane');
  const root = Math.sqrt(product);
  const wn = prewarp ? (2 / h) * Math.atan(root) : (2 / h) * root;
  return { zeta: -sum / (2 * root), wnRadPerSec: wn };
}

/**
 * The least-squares solution of A x = b for a tall A (m x p, row-major) by Householder QR; refuses
 * a rank-deficient A (an input that never changes cannot separate the input terms; a first-order
 * gate makes g[n-1] a combination of g[n] and u[n]).
 */
function leastSquares(a: Float64Array, b: Float64Array, m: number, p: number): Float64Array {
  const r = Float64Array.from(a);
  const y = Float64Array.from(b);
  const diagonal = new Float64Array(p);
  let scale = 0;
  for (let i = 0; i < r.length; i++) scale = Math.max(scale, Math.abs(r[i]!));
  for (let column = 0; column < p; column++) {
    let norm = 0;
    for (let row = column; row < m; row++) norm += r[row * p + column]! ** 2;
    norm = Math.sqrt(norm);
    if (norm <= 1e-12 * scale * Math.sqrt(m))
      throw new KnobError(
        'INVALID_INPUT',
        'no second-order model can be told apart in this recording: its input does not vary enough, or a lower-order gate (ODE-Lite, Knob-IA) made it',
      );
    const alpha = r[column * p + column]! > 0 ? -norm : norm;
    // v = x - alpha e1, stored in place below the diagonal
    r[column * p + column] = r[column * p + column]! - alpha;
    let vNorm = 0;
    for (let row = column; row < m; row++) vNorm += r[row * p + column]! ** 2;
    for (let other = column + 1; other < p; other++) {
      let dot = 0;
      for (let row = column; row < m; row++) dot += r[row * p + column]! * r[row * p + other]!;
      const factor = (2 * dot) / vNorm;
      for (let row = column; row < m; row++) r[row * p + other] = r[row * p + other]! - factor * r[row * p + column]!;
    }
    let dot = 0;
    for (let row = column; row < m; row++) dot += r[row * p + column]! * y[row]!;
    const factor = (2 * dot) / vNorm;
    for (let row = column; row < m; row++) y[row] = y[row]! - factor * r[row * p + column]!;
    diagonal[column] = alpha;
  }
  const x = new Float64Array(p);
  for (let row = p - 1; row >= 0; row--) {
    let sum = y[row]!;
    for (let column = row + 1; column < p; column++) sum -= r[row * p + column]! * x[column]!;
    x[row] = sum / diagonal[row]!;
  }
  return x;
}
