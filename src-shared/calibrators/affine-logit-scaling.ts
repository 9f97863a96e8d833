import type { CancelSignal } from '../cancel-signal';
import { KnobError } from '../errors';
import { expNonPositive } from '../fusion/exp-non-positive';
import type { LogitArray } from '../fusion/logits';
import type { FitReport } from './fit-report';
import { fitAffineByNewton, newtonApplies, type AffinePenalty } from './affine-logit-newton';
import { minimizeLbfgs } from './lbfgs';

/**
 * Vector scaling softmax(w * z + b) (2K parameters) and matrix scaling softmax(W z + b)
 * (K^2 + K parameters), on whatever rows they are given: the logits z for vector and matrix
 * scaling, log p for Dirichlet calibration (on log p they are different models, DEFINITIONS.md
 * 4.8). Fitted on the mean NLL plus a penalty: by default lambda (sum (W - I)^2 + sum b^2) / 2,
 * which keeps matrix scaling well-posed on small sets (lambda = 0 is plain maximum likelihood); or
 * ODIR (Kull et al. 2019), lambda / (K (K - 1)) sum_{i != j} W_ij^2 + mu / K sum b^2, which leaves
 * the diagonal free. Fitted by L-BFGS; a penalised matrix fit it has not finished within
 * LBFGS_BEFORE_NEWTON iterations goes on by Newton's method where its Hessian is small
 * (affine-logit-newton.ts), and back to L-BFGS if Newton cannot finish either. Starting point: the
 * caller's (a fit at a nearby penalty), else identity and zero bias.
 */
export interface OdirRegularisation {
  /** lambda, on the off-diagonal weights. */
  offDiagonal: number;
  /** mu, on the intercepts. */
  intercept: number;
}
export interface AffineLogitParams {
  kind: 'vector' | 'matrix';
  classCount: number;
  /** vector: K weights; matrix: K x K row-major. */
  weights: Float64Array;
  bias: Float64Array;
}

/** One row of W z + b (vector: w * z + b) into out[outOffset ..). */
export function affineLogitRowInto(
  kind: 'vector' | 'matrix',
  weights: ArrayLike<number>,
  bias: ArrayLike<number>,
  logits: LogitArray,
  offset: number,
  k: number,
  out: Float64Array,
  outOffset = 0,
): void {
  for (let r = 0; r < k; r++) {
    let v = bias[r];
    if (kind === 'vector') v += weights[r] * logits[offset + r];
    else for (let c = 0; c < k; c++) v += weights[r * k + c] * logits[offset + c];
    out[outOffset + r] = v;
  }
}

function applyRow(
  params: AffineLogitParams,
  logits: LogitArray,
  offset: number,
  out: Float64Array,
  outOffset: number,
): void {
  affineLogitRowInto(params.kind, params.weights, params.bias, logits, offset, params.classCount, out, outOffset);
}

export function applyAffineLogitScaling(params: AffineLogitParams, logits: LogitArray): Float64Array {
  const k = params.classCount;
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length / k; i++) applyRow(params, logits, i * k, out, i * k);
  return out;
}

/**
 * The softmax does not change when the same vector u is added to every row of W (all classes'
 * scores move by u . x) or the same constant to every bias, so the NLL is flat along those K + 1
 * directions and only the penalty's tiny curvature pins them: an optimiser crawls there. The fit
 * therefore works on free parameters (V, c) and uses W = V + 1 t(V)^T, b = c - mean(c), with t the
 * shift that minimises the penalty along the flat directions (closed form, linear in V): the same
 * optimum, with those directions exactly flat (zero gradient) instead of nearly so.
 */
function gaugeShiftInto(v: Float64Array, k: number, odir: boolean, t: Float64Array): void {
  for (let j = 0; j < k; j++) {
    let sum = 0;
    for (let i = 0; i < k; i++) {
      if (odir && i === j) continue;
      sum += v[i * k + j] - (!odir && i === j ? 1 : 0);
    }
    t[j] = -sum / (odir ? k - 1 : k);
  }
}

export function fitAffineLogitScaling(
  kind: 'vector' | 'matrix',
  logits: LogitArray,
  labels: Int32Array,
  classCount: number,
  regularisation: number | OdirRegularisation = kind === 'matrix' ? 1e-3 : 0,
  signal?: CancelSignal,
  /** Where the optimiser starts (a fit at a nearby penalty, say), else the identity map. */
  start?: AffineLogitParams,
): { params: AffineLogitParams; report: FitReport } {
  const odir = typeof regularisation === 'number' ? null : regularisation;
  const l2 = typeof regularisation === 'number' ? regularisation : 0;
  const n = labels.length;
  const k = classCount;
  if (n === 0) throw new KnobError('INVALID_INPUT', `${kind} scaling needs calibration data`);
  const penaltyName =
    odir !== null
      ? `ODIR lambda ${odir.offDiagonal} off-diagonal, mu ${odir.intercept} intercept`
      : l2 > 0
        ? `L2 ${l2} on W - I and b`
        : '';
  const report = (optimiser: string, value: number, iterations: number, converged: boolean): FitReport => ({
    method: `${kind} scaling (${optimiser}${penaltyName ? `, ${penaltyName}` : ''})`,
    objectiveName: penaltyName ? 'NLL + penalty' : 'NLL',
    objective: value,
    iterations,
    converged,
  });
  const penalty = affinePenalty(kind, k, odir, l2);
  const weightCount = kind === 'vector' ? k : k * k;
  const gauge = kind === 'matrix' && k > 1;
  const row = new Float64Array(k);
  const shift = new Float64Array(k);
  const weights = new Float64Array(weightCount);
  const bias = new Float64Array(k);
  const grad = new Float64Array(weightCount + k);
  const params: AffineLogitParams = { kind, classCount: k, weights, bias };
  /** (W, b) from the free parameters x: the penalty's representative of x's class (see above). */
  const realise = (x: Float64Array): void => {
    weights.set(x.subarray(0, weightCount));
    bias.set(x.subarray(weightCount));
    if (!gauge) return;
    gaugeShiftInto(weights, k, odir !== null, shift);
    for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) weights[i * k + j] += shift[j];
    let mean = 0;
    for (let r = 0; r < k; r++) mean += bias[r];
    for (let r = 0; r < k; r++) bias[r] -= mean / k;
  };
  const objectiveOnFree = (x: Float64Array, gradient: Float64Array): number => {
    realise(x);
    grad.fill(0);
    let nll = 0;
    const vector = kind === 'vector';
    for (let i = 0; i < n; i++) {
      const o = i * k;
      applyRow(params, logits, o, row, 0);
      let max = -Infinity;
      for (let r = 0; r < k; r++) if (row[r] > max) max = row[r];
      const label = labels[i];
      const labelShifted = row[label] - max;
      let sum = 0;
      for (let r = 0; r < k; r++) {
        const e = expNonPositive(row[r] - max);
        row[r] = e;
        sum += e;
      }
      nll += Math.log(sum) - labelShifted;
      const inverse = 1 / sum;
      for (let r = 0; r < k; r++) {
        // d(-log p_y)/d(row_r) = p_r - 1[r = y]
        const residual = row[r] * inverse - (label === r ? 1 : 0);
        grad[weightCount + r] += residual;
        if (vector) grad[r] += residual * logits[o + r];
        else {
          const at = r * k;
          for (let c = 0; c < k; c++) grad[at + c] += residual * logits[o + c];
        }
      }
    }
    let penaltyValue = 0;
    for (let j = 0; j < grad.length; j++) {
      grad[j] /= n;
      const deviation = (j < weightCount ? weights[j] : bias[j - weightCount]) - penalty.centres[j];
      penaltyValue += (penalty.weights[j] / 2) * deviation * deviation;
      grad[j] += penalty.weights[j] * deviation;
    }
    // Back to the free parameters: dW/dV through the shift, db/dc through the centring.
    gradient.set(grad);
    if (gauge) {
      for (let j = 0; j < k; j++) {
        let column = 0;
        for (let r = 0; r < k; r++) column += grad[r * k + j];
        for (let i = 0; i < k; i++) {
          if (odir !== null && i === j) continue;
          gradient[i * k + j] -= column / (odir !== null ? k - 1 : k);
        }
      }
      let mean = 0;
      for (let r = 0; r < k; r++) mean += grad[weightCount + r];
      for (let r = 0; r < k; r++) gradient[weightCount + r] -= mean / k;
    }
    return nll / n + penaltyValue;
  };
  // Diagonal preconditioning: the optimiser sees the weights of standardised inputs,
  // W_rc = u_rc / s_c and b_r = u_r - sum_c W_rc m_c (m_c, s_c: mean and deviation of input column
  // c). ln p columns span tens of units while logits span a few, and a bias moves with every
  // weight times its column's mean: in these coordinates the curvature is near-uniform and L-BFGS
  // needs a fraction of the iterations. Same objective, same optimum.
  const columnOf = (j: number): number => (kind === 'vector' ? j : j % k);
  const rowOf = (j: number): number => (kind === 'vector' ? j : Math.floor(j / k));
  const columnMean = new Float64Array(k);
  const columnScale = new Float64Array(k);
  for (let i = 0; i < n; i++) for (let c = 0; c < k; c++) columnMean[c] += logits[i * k + c] / n;
  for (let i = 0; i < n; i++)
    for (let c = 0; c < k; c++) columnScale[c] += (logits[i * k + c] - columnMean[c]) ** 2 / n;
  for (let c = 0; c < k; c++) columnScale[c] = Math.sqrt(columnScale[c]) || 1;
  const free = new Float64Array(weightCount + k);
  const freeGradient = new Float64Array(weightCount + k);
  const toFree = (u: Float64Array, out: Float64Array): void => {
    for (let r = 0; r < k; r++) out[weightCount + r] = u[weightCount + r];
    for (let j = 0; j < weightCount; j++) {
      out[j] = u[j] / columnScale[columnOf(j)];
      out[weightCount + rowOf(j)] -= out[j] * columnMean[columnOf(j)];
    }
  };
  const objective = (u: Float64Array, gradient: Float64Array): number => {
    toFree(u, free);
    const value = objectiveOnFree(free, freeGradient);
    for (let r = 0; r < k; r++) gradient[weightCount + r] = freeGradient[weightCount + r];
    for (let j = 0; j < weightCount; j++) {
      const c = columnOf(j);
      gradient[j] = (freeGradient[j] - freeGradient[weightCount + rowOf(j)] * columnMean[c]) / columnScale[c];
    }
    return value;
  };
  /** L-BFGS from `from` (else the identity map) for at most `maxIterations`. */
  const lbfgsFrom = (from: AffineLogitParams | undefined, maxIterations: number): OptimiserRun => {
    const initial = new Float64Array(weightCount + k);
    if (from) {
      initial.set(from.weights);
      initial.set(from.bias, weightCount);
    } else for (let r = 0; r < k; r++) initial[kind === 'vector' ? r : r * k + r] = 1;
    // u from (W, b): u_rc = W_rc s_c and u_r = b_r + sum_c W_rc m_c (toFree's inverse)
    const startU = new Float64Array(weightCount + k);
    startU.set(initial.subarray(weightCount), weightCount);
    for (let j = 0; j < weightCount; j++) {
      const c = columnOf(j);
      startU[j] = initial[j] * columnScale[c];
      startU[weightCount + rowOf(j)] += initial[j] * columnMean[c];
    }
    const result = minimizeLbfgs(objective, startU, { gradientTolerance: 1e-8, maxIterations, signal });
    toFree(result.x, free);
    realise(free);
    return {
      params: { kind, classCount: k, weights: Float64Array.from(weights), bias: Float64Array.from(bias) },
      value: result.value,
      iterations: result.iterations,
      converged: result.converged,
    };
  };
  const done = (run: OptimiserRun, optimiser: string, iterations = run.iterations) => ({
    params: run.params,
    report: report(optimiser, run.value, iterations, run.converged),
  });
  // L-BFGS first: where the inputs are well conditioned it converges in tens of iterations, each
  // cheaper than a Newton step. Where it has not within LBFGS_BEFORE_NEWTON (ln p of a confident
  // model: 850 to 3,300 needed) and the Hessian is affordable, Newton's method finishes from there.
  const newtonAffordable = kind === 'matrix' && newtonApplies(n, k, penalty);
  const first = lbfgsFrom(start, newtonAffordable ? LBFGS_BEFORE_NEWTON : LBFGS_MAX_ITERATIONS);
  if (first.converged || !newtonAffordable) return done(first, 'L-BFGS');
  const fit = fitAffineByNewton(logits, labels, k, penalty, signal, first.params);
  const newton: OptimiserRun = { ...fit, params: { kind, classCount: k, weights: fit.weights, bias: fit.bias } };
  const steps = `L-BFGS for ${first.iterations} iterations, then Newton for ${fit.iterations} steps`;
  if (fit.converged) return done(newton, steps, first.iterations + fit.iterations);
  // a Hessian singular to rounding (a saturated softmax: |ln p| in the thousands) stops Newton:
  // L-BFGS goes on from the better of the two points for the rest of its iterations
  const rest = lbfgsFrom(
    (newton.value < first.value ? newton : first).params,
    LBFGS_MAX_ITERATIONS - LBFGS_BEFORE_NEWTON,
  );
  return done(rest, `${steps}, then L-BFGS`, first.iterations + fit.iterations + rest.iterations);
}

/** L-BFGS's iterations at most (its default cap), and before Newton's method takes over where it may. */
const LBFGS_MAX_ITERATIONS = 500;
const LBFGS_BEFORE_NEWTON = 100;

interface OptimiserRun {
  params: AffineLogitParams;
  value: number;
  iterations: number;
  converged: boolean;
}

/**
 * The penalty per parameter, in the parameters' order (the weights, then the biases): its weight
 * and centre, so the penalty is sum_j (weight_j / 2) (theta_j - centre_j)^2. ODIR: 2 lambda / (K (K - 1))
 * on the off-diagonal weights, 0 on the diagonal (a vector scaling's weights are all diagonal),
 * 2 mu / K on the intercepts; L2: lambda on W - I and b.
 */
function affinePenalty(
  kind: 'vector' | 'matrix',
  k: number,
  odir: OdirRegularisation | null,
  l2: number,
): AffinePenalty {
  const weightCount = kind === 'vector' ? k : k * k;
  const weights = new Float64Array(weightCount + k);
  const centres = new Float64Array(weightCount + k);
  for (let j = 0; j < weightCount + k; j++) {
    const isDiagonal = j < weightCount && (kind === 'vector' || Math.floor(j / k) === j % k);
    if (isDiagonal) centres[j] = 1;
    if (odir === null) weights[j] = l2;
    else if (j >= weightCount) weights[j] = (2 * odir.intercept) / k;
    else if (!isDiagonal) weights[j] = (2 * odir.offDiagonal) / (k * (k - 1));
  }
  return { weights, centres };
}
