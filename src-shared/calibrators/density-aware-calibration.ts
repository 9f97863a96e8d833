import { KnobError } from '../errors';
import { minimizeLbfgs } from './lbfgs';
import {
  compileNeighbourDistance,
  featureBankSpec,
  fittingNeighbourDistances,
  type FeatureBank,
  type FeatureBankSpec,
  type FeatureCalibratorFit,
} from './feature-bank';
import { fitTemperature } from './temperature-scaling';

/**
 * Density-aware calibration, DAC (Tomani, Buettner & Cremers 2023): a temperature per sample from
 * how dense the fitting data are around it in feature space, so that inputs unlike anything seen
 * in fitting (a corruption, a new scene) get a higher temperature. The density score is the mean
 * distance s(x) to the k nearest fitting frames (feature-bank.ts: normalised features, brute
 * force, a frame left out of its own neighbours); the paper combines such scores of several layers
 * linearly into the temperature; with one feature layer (the model's `features` output) that is
 *   T(x) = 0.05 + softplus(a + b log(s(x) / s_mean)),   p = softmax(z / T(x)),
 * (softplus keeps T positive and monotone in the score; the log makes b a power of the distance),
 * with (a, b) minimising the NLL on the fitting frames (L-BFGS, from temperature scaling's optimum
 * at b = 0). Accuracy-preserving, as every temperature method.
 */
export interface DacParams {
  neighbours: number;
  bank: FeatureBankSpec;
  /** mean neighbour distance of the fitting frames: the score's unit */
  distanceScale: number;
  a: number;
  b: number;
}

export const DAC_NEIGHBOURS = 10;
/** The lowest temperature DAC gives (T = DAC_MIN_TEMPERATURE + softplus(...)). */
export const DAC_MIN_TEMPERATURE = 0.05;
/** Added to the relative distance before its log, so a frame on a bank row stays finite. */
export const DAC_SCORE_OFFSET = 1e-6;

const softplus = (x: number): number => (x > 30 ? x : Math.log1p(Math.exp(x)));
const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

function logScore(distance: number, scale: number): number {
  return Math.log(distance / scale + DAC_SCORE_OFFSET);
}

export const fitDac: FeatureCalibratorFit<DacParams> = (logits, labels, classCount, features, width) => {
  const n = labels.length;
  const k = classCount;
  if (n < DAC_NEIGHBOURS + 1)
    throw new KnobError(
      'INVALID_INPUT',
      `density-aware calibration needs more than ${DAC_NEIGHBOURS} frames, got ${n}`,
    );
  const { bank, distances } = fittingNeighbourDistances(features, width, n, DAC_NEIGHBOURS);
  let distanceScale = 0;
  for (let i = 0; i < n; i++) distanceScale += distances[i] / n;
  if (!(distanceScale > 0)) distanceScale = 1;
  const u = Float64Array.from(distances, (d) => logScore(d, distanceScale));
  const rowMax = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let max = -Infinity;
    for (let c = 0; c < k; c++) max = Math.max(max, logits[i * k + c]);
    rowMax[i] = max;
  }
  const objective = (theta: Float64Array, gradient: Float64Array): number => {
    let nll = 0;
    gradient.fill(0);
    for (let i = 0; i < n; i++) {
      const pre = theta[0] + theta[1] * u[i];
      const beta = 1 / (DAC_MIN_TEMPERATURE + softplus(pre));
      const o = i * k;
      let sum = 0;
      let first = 0;
      for (let c = 0; c < k; c++) {
        const d = logits[o + c] - rowMax[i];
        const e = Math.exp(beta * d);
        sum += e;
        first += e * d;
      }
      const label = logits[o + labels[i]] - rowMax[i];
      nll += Math.log(sum) - beta * label;
      // dNLL/dbeta = E_p[d] - d_y; dbeta/dpre = -beta^2 sigmoid(pre)
      const dPre = (first / sum - label) * -beta * beta * sigmoid(pre);
      gradient[0] += dPre / n;
      gradient[1] += (dPre * u[i]) / n;
    }
    return nll / n;
  };
  const temperature = fitTemperature(logits, labels, k).params.temperature;
  const start = Float64Array.from([Math.log(Math.expm1(Math.max(temperature - DAC_MIN_TEMPERATURE, 1e-6))), 0]);
  const result = minimizeLbfgs(objective, start, { gradientTolerance: 1e-9 });
  return {
    params: {
      neighbours: DAC_NEIGHBOURS,
      bank: featureBankSpec(bank),
      distanceScale,
      a: result.x[0],
      b: result.x[1],
    },
    report: {
      method: `density-aware calibration (Tomani et al. 2023): T from the mean distance to ${DAC_NEIGHBOURS} nearest of ${bank.rows} fitting frames in feature space, L-BFGS`,
      objectiveName: 'NLL',
      objective: result.value,
      iterations: result.iterations,
      converged: result.converged,
    },
  };
};

/** A fitted DAC ready to apply row by row: its bank decoded once, its buffers made once. */
export function compileDac(params: DacParams): {
  bank: FeatureBank;
  temperatureOf(features: ArrayLike<number>, offset: number): number;
} {
  const { bank, distanceOf } = compileNeighbourDistance(params.bank, params.neighbours);
  return {
    bank,
    temperatureOf(features, offset) {
      const distance = distanceOf(features, offset);
      return DAC_MIN_TEMPERATURE + softplus(params.a + params.b * logScore(distance, params.distanceScale));
    },
  };
}
