import type { CancelSignal } from '../cancel-signal';
import { sigmoid } from '../calibrators/binary-scores';
import { addScaledInto, dotProduct } from '../calibrators/dot-product';
import { minimizeLbfgs } from '../calibrators/lbfgs';
import { seededRandom, normalDraw } from '../random';

/**
 * The learned gate target u*(x) of a Knob model fitted on a user's backbone (issue 31), as
 * tools/train/train_knob.py trains the shipped model's: a small MLP on the standardised features
 * (and image statistics, knob-heads.ts),
 *   u = sigmoid(w2 . relu(W1 x + b1) + b2),
 * fitted together with the static branch's log-scale s on
 *   FUSED_WEIGHT CE(y, (1 - u) e^s z_static + u z_dyn) + AUX_WEIGHT BCE(u, [CE(z_dyn) < CE(e^s z_static)])
 *   + (l2 / 2) (||W1||^2 + ||w2||^2),
 * mean over rows, the branches' heads fixed (fitted before, knob-heads.ts). The fused loss teaches u
 * to fall where the dynamic branch errs; the auxiliary target, the oracle advantage, is noisy on
 * corrupted inputs and weighs little, as in the script. L-BFGS from a seeded start (W1 ~ N(0, 1/F),
 * the rest zero): deterministic from the seed.
 */
export const FUSED_WEIGHT = 8;
export const AUX_WEIGHT = 0.25;

export interface GateTargetNetwork {
  /** Row-major [hidden, inputs]. */
  w1: Float64Array;
  b1: Float64Array;
  w2: Float64Array;
  b2: number;
  /** log of the static branch's scale. */
  logStaticScale: number;
}

export interface GateTargetInput {
  /** Standardised features, row-major [rows, width]. */
  x: Float64Array;
  width: number;
  labels: Int32Array;
  /** The heads' logits on the same rows, [rows, k] each (z_static before its scale). */
  zStatic: Float64Array;
  zDyn: Float64Array;
  classCount: number;
}

/** Where each parameter sits in the flat vector: W1 (hidden x width), b1, w2, b2, log s. */
function parameterLayout(hidden: number, width: number) {
  const b1At = hidden * width;
  const w2At = b1At + hidden;
  const b2At = w2At + hidden;
  const logSAt = b2At + 1;
  return { w1At: 0, b1At, w2At, b2At, logSAt, count: logSAt + 1 };
}

/**
 * The objective of the fit over the flat parameter vector (parameterLayout), writing its gradient:
 * what L-BFGS minimises, exported so its gradient can be checked against finite differences.
 */
export function gateTargetLoss(
  input: GateTargetInput,
  hidden: number,
  l2: number,
): (params: Float64Array, gradient: Float64Array) => number {
  const { x, width, labels, zStatic, zDyn, classCount: k } = input;
  const n = labels.length;
  const h = hidden;
  const { w1At, b1At, w2At, b2At, logSAt, count } = parameterLayout(h, width);
  const hiddenValues = new Float64Array(h);
  const fused = new Float64Array(k);
  return (params: Float64Array, gradient: Float64Array): number => {
    gradient.fill(0);
    const scale = Math.exp(params[logSAt]);
    let loss = 0;
    for (let i = 0; i < n; i++) {
      const o = i * width;
      let a = params[b2At];
      for (let j = 0; j < h; j++) {
        const z = params[b1At + j] + dotProduct(params, w1At + j * width, x, o, width);
        hiddenValues[j] = z > 0 ? z : 0;
        a += params[w2At + j] * hiddenValues[j];
      }
      const u = sigmoid(a);
      const y = labels[i];
      const zo = i * k;
      // the fused row, its log-sum-exp, and each branch's CE for the oracle-advantage target
      let max = -Infinity;
      let maxS = -Infinity;
      let maxD = -Infinity;
      for (let c = 0; c < k; c++) {
        const s = scale * zStatic[zo + c];
        fused[c] = (1 - u) * s + u * zDyn[zo + c];
        if (fused[c] > max) max = fused[c];
        if (s > maxS) maxS = s;
        if (zDyn[zo + c] > maxD) maxD = zDyn[zo + c];
      }
      let sum = 0;
      let sumS = 0;
      let sumD = 0;
      for (let c = 0; c < k; c++) {
        sum += Math.exp(fused[c] - max);
        sumS += Math.exp(scale * zStatic[zo + c] - maxS);
        sumD += Math.exp(zDyn[zo + c] - maxD);
      }
      const lse = max + Math.log(sum);
      const ceStatic = maxS + Math.log(sumS) - scale * zStatic[zo + y];
      const ceDyn = maxD + Math.log(sumD) - zDyn[zo + y];
      const target = ceDyn < ceStatic ? 1 : 0;
      const ce = lse - fused[y];
      const clipped = Math.min(1 - 1e-12, Math.max(1e-12, u));
      const bce = -(target * Math.log(clipped) + (1 - target) * Math.log(1 - clipped));
      loss += FUSED_WEIGHT * ce + AUX_WEIGHT * bce;
      // dCE/du and dCE/d(log s) through the fused row
      let dCeDu = 0;
      let dCeDlogS = 0;
      for (let c = 0; c < k; c++) {
        const residual = Math.exp(fused[c] - lse) - (c === y ? 1 : 0);
        const s = scale * zStatic[zo + c];
        dCeDu += residual * (zDyn[zo + c] - s);
        dCeDlogS += residual * (1 - u) * s;
      }
      const dA = FUSED_WEIGHT * dCeDu * u * (1 - u) + AUX_WEIGHT * (u - target);
      gradient[logSAt] += FUSED_WEIGHT * dCeDlogS;
      gradient[b2At] += dA;
      for (let j = 0; j < h; j++) {
        gradient[w2At + j] += dA * hiddenValues[j];
        if (hiddenValues[j] <= 0) continue;
        const dz = dA * params[w2At + j];
        gradient[b1At + j] += dz;
        addScaledInto(dz, x, o, gradient, w1At + j * width, width);
      }
    }
    for (let p = 0; p < count; p++) gradient[p] /= n;
    let penalty = 0;
    for (let p = 0; p < h * width; p++) {
      penalty += params[p] * params[p];
      gradient[p] += l2 * params[p];
    }
    for (let j = 0; j < h; j++) {
      penalty += params[w2At + j] ** 2;
      gradient[w2At + j] += l2 * params[w2At + j];
    }
    return loss / n + 0.5 * l2 * penalty;
  };
}

export function fitGateTargetNetwork(
  input: GateTargetInput,
  options: { hidden: number; l2: number; seed: number; maxIterations: number; signal?: CancelSignal },
): { network: GateTargetNetwork; objective: number; iterations: number; converged: boolean } {
  const { width } = input;
  const h = options.hidden;
  const { w1At, b1At, w2At, b2At, logSAt, count } = parameterLayout(h, width);
  const objective = gateTargetLoss(input, h, options.l2);
  const start = new Float64Array(count);
  const random = seededRandom(options.seed);
  for (let p = 0; p < h * width; p++) start[p] = normalDraw(random) / Math.sqrt(width);
  const result = minimizeLbfgs(objective, start, {
    maxIterations: options.maxIterations,
    gradientTolerance: 1e-6,
    signal: options.signal,
  });
  const p = result.x;
  return {
    network: {
      w1: p.slice(w1At, b1At),
      b1: p.slice(b1At, w2At),
      w2: p.slice(w2At, b2At),
      b2: p[b2At],
      logStaticScale: p[logSAt],
    },
    objective: result.value,
    iterations: result.iterations,
    converged: result.converged,
  };
}

/** u*(x) of one standardised row. */
export function gateTargetOf(network: GateTargetNetwork, x: ArrayLike<number>, offset: number, width: number): number {
  let a = network.b2;
  const h = network.b1.length;
  for (let j = 0; j < h; j++) {
    let z = network.b1[j];
    for (let c = 0; c < width; c++) z += network.w1[j * width + c] * x[offset + c];
    if (z > 0) a += network.w2[j] * z;
  }
  return sigmoid(a);
}
