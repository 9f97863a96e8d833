import { stopIfCancelled, type CancelSignal } from '../cancel-signal';
import { KnobError } from '../errors';
import type { LogitArray } from '../fusion/logits';
import { normalDraw, seededRandom } from '../random';
import type { FitReport } from './fit-report';
import { fitTemperature } from './temperature-scaling';

/**
 * Parameterized temperature scaling, PTS (Tomani, Cremers & Buettner 2022): p = softmax(z / T(z))
 * with a temperature predicted per sample, T(z) = |MLP(sort_desc(z)[:k])|, trained by minimising
 * the mean squared error between p and the one-hot label. Accuracy-preserving like temperature
 * scaling (one positive T per row keeps the order of the logits), but a row's temperature can
 * depend on its logit profile (a confident row may need a higher temperature than an unsure one).
 *
 * Our choices where the paper leaves freedom:
 * - inputs: the top min(K, 10) logits sorted in descending order, each standardised by its mean
 *   and standard deviation on the fitting data (stored with the parameters);
 * - the network: two hidden layers of `hidden` tanh units (smooth: no dead units in a net this
 *   small), one linear output o; T = 0.05 + softplus(o). The paper takes |o|; with |o| the net
 *   can reach a small temperature for one group of rows by crossing zero, and rows between groups
 *   then get T near 0 (we saw T = 0.01 and a held-out NLL of 198 on single rows); softplus is
 *   monotone, so no row gets a temperature the fitting rows did not ask for;
 * - training: Adam (lr 5e-3, betas 0.9 / 0.999) on seeded mini-batches of 1,000 rows for `steps`
 *   steps, starting from temperature scaling's optimum (output bias giving T_ts, hidden-to-output
 *   weights 0), so the fit begins where temperature scaling ends; the loss is the paper's squared
 *   error by default, or the NLL (`objective: 'nll'`).
 */
export interface PtsParams {
  topK: number;
  hidden: number;
  inputMean: number[];
  inputScale: number[];
  /** hidden x topK, row-major */
  w1: number[];
  b1: number[];
  /** hidden x hidden, row-major */
  w2: number[];
  b2: number[];
  w3: number[];
  b3: number;
}

export const PTS_MAX_INPUTS = 10;
export const MIN_TEMPERATURE = 0.05;

export interface PtsFitOptions {
  hidden?: number;
  steps?: number;
  batchSize?: number;
  learningRate?: number;
  seed?: number;
  /** 'mse' (the paper's) or 'nll'. */
  objective?: 'mse' | 'nll';
  /** Read before each step: 1,500 steps take seconds, and a cancelled fit stops within one. */
  signal?: CancelSignal;
}

/** The arrays of a fitted PTS, typed once, with the buffers one row's forward pass needs. */
export interface CompiledPts {
  params: PtsParams;
  temperatureOf(logits: LogitArray, offset: number, k: number): number;
}

/** The k largest values of a row in descending order, into `out` (insertion: k <= 10). */
function topSortedInto(logits: LogitArray, offset: number, classCount: number, topK: number, out: Float64Array): void {
  let filled = 0;
  for (let c = 0; c < classCount; c++) {
    const v = logits[offset + c];
    if (filled === topK && v <= out[topK - 1]) continue;
    let j = filled < topK ? filled++ : topK - 1;
    while (j > 0 && out[j - 1] < v) {
      out[j] = out[j - 1];
      j--;
    }
    out[j] = v;
  }
}

/** T = MIN_TEMPERATURE + softplus(o): positive, smooth and monotone in o. */
export function temperatureOfOutput(o: number): number {
  return MIN_TEMPERATURE + (o > 30 ? o : Math.log1p(Math.exp(o)));
}

/** The output that gives temperature T (T > MIN_TEMPERATURE). */
function outputOfTemperature(temperature: number): number {
  const t = Math.max(temperature - MIN_TEMPERATURE, 1e-6);
  return t > 30 ? t : Math.log(Math.expm1(t));
}

export function compilePts(params: PtsParams): CompiledPts {
  const { topK, hidden } = params;
  const mean = Float64Array.from(params.inputMean);
  const scale = Float64Array.from(params.inputScale);
  const w1 = Float64Array.from(params.w1);
  const b1 = Float64Array.from(params.b1);
  const w2 = Float64Array.from(params.w2);
  const b2 = Float64Array.from(params.b2);
  const w3 = Float64Array.from(params.w3);
  const input = new Float64Array(topK);
  const h1 = new Float64Array(hidden);
  return {
    params,
    temperatureOf(logits, offset, k) {
      topSortedInto(logits, offset, k, topK, input);
      for (let j = 0; j < topK; j++) input[j] = (input[j] - mean[j]) / scale[j];
      for (let u = 0; u < hidden; u++) {
        let a = b1[u];
        for (let j = 0; j < topK; j++) a += w1[u * topK + j] * input[j];
        h1[u] = Math.tanh(a);
      }
      let o = params.b3;
      for (let u = 0; u < hidden; u++) {
        let a = b2[u];
        for (let j = 0; j < hidden; j++) a += w2[u * hidden + j] * h1[j];
        o += w3[u] * Math.tanh(a);
      }
      return temperatureOfOutput(o);
    },
  };
}

export function fitPts(
  logits: LogitArray,
  labels: Int32Array,
  classCount: number,
  options: PtsFitOptions = {},
): { params: PtsParams; report: FitReport } {
  const n = labels.length;
  const k = classCount;
  if (n < 2) throw new KnobError('INVALID_INPUT', `parameterized temperature scaling needs at least 2 rows, got ${n}`);
  const hidden = options.hidden ?? 5;
  const steps = options.steps ?? 1500;
  const batchSize = Math.min(options.batchSize ?? 1000, n);
  const learningRate = options.learningRate ?? 5e-3;
  const random = seededRandom(options.seed ?? 0);
  const topK = Math.min(k, PTS_MAX_INPUTS);
  const objective = options.objective ?? 'mse';

  // standardised sorted inputs of every row, computed once
  const inputs = new Float64Array(n * topK);
  const row = new Float64Array(topK);
  for (let i = 0; i < n; i++) {
    topSortedInto(logits, i * k, k, topK, row);
    inputs.set(row, i * topK);
  }
  const inputMean = new Array<number>(topK).fill(0);
  const inputScale = new Array<number>(topK).fill(0);
  for (let i = 0; i < n; i++) for (let j = 0; j < topK; j++) inputMean[j] += inputs[i * topK + j] / n;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < topK; j++) inputScale[j] += (inputs[i * topK + j] - inputMean[j]) ** 2 / n;
  for (let j = 0; j < topK; j++) inputScale[j] = Math.sqrt(inputScale[j]) || 1;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < topK; j++) inputs[i * topK + j] = (inputs[i * topK + j] - inputMean[j]) / inputScale[j];

  // parameters in one vector: w1 | b1 | w2 | b2 | w3 | b3
  const sizes = [hidden * topK, hidden, hidden * hidden, hidden, hidden, 1];
  const starts = sizes.map((_, s) => sizes.slice(0, s).reduce((a, b) => a + b, 0));
  const [W1, B1, W2, B2, W3, B3] = starts;
  const count = starts[5] + 1;
  const theta = new Float64Array(count);
  for (let j = 0; j < hidden * topK; j++) theta[W1 + j] = normalDraw(random) / Math.sqrt(topK);
  for (let j = 0; j < hidden * hidden; j++) theta[W2 + j] = normalDraw(random) / Math.sqrt(hidden);
  theta[B3] = outputOfTemperature(fitTemperature(logits, labels, k).params.temperature);

  const gradient = new Float64Array(count);
  const m1 = new Float64Array(count);
  const m2 = new Float64Array(count);
  const h1 = new Float64Array(hidden);
  const h2 = new Float64Array(hidden);
  const dh1 = new Float64Array(hidden);
  const p = new Float64Array(k);
  const batch = new Uint32Array(batchSize);
  let loss = 0;
  for (let step = 1; step <= steps; step++) {
    stopIfCancelled(options.signal, 'the fit was cancelled');
    for (let b = 0; b < batchSize; b++) batch[b] = batchSize === n ? b : Math.floor(random() * n);
    gradient.fill(0);
    loss = 0;
    for (let b = 0; b < batchSize; b++) {
      const i = batch[b];
      const x = i * topK;
      for (let u = 0; u < hidden; u++) {
        let a = theta[B1 + u];
        for (let j = 0; j < topK; j++) a += theta[W1 + u * topK + j] * inputs[x + j];
        h1[u] = Math.tanh(a);
      }
      let o = theta[B3];
      for (let u = 0; u < hidden; u++) {
        let a = theta[B2 + u];
        for (let j = 0; j < hidden; j++) a += theta[W2 + u * hidden + j] * h1[j];
        h2[u] = Math.tanh(a);
        o += theta[W3 + u] * h2[u];
      }
      const temperature = temperatureOfOutput(o);
      const beta = 1 / temperature;
      // p = softmax(beta z); loss = sum_c (p_c - y_c)^2
      const offset = i * k;
      let max = -Infinity;
      for (let c = 0; c < k; c++) max = Math.max(max, logits[offset + c]);
      let sum = 0;
      for (let c = 0; c < k; c++) {
        p[c] = Math.exp(beta * (logits[offset + c] - max));
        sum += p[c];
      }
      let meanLogit = 0;
      for (let c = 0; c < k; c++) {
        p[c] /= sum;
        meanLogit += p[c] * logits[offset + c];
      }
      let dBeta = 0;
      if (objective === 'nll') {
        // -log p_y = log sum exp(beta z) - beta z_y; d/dbeta = E_p z - z_y
        loss += Math.log(sum) - beta * (logits[offset + labels[i]] - max);
        dBeta = meanLogit - logits[offset + labels[i]];
      } else {
        // sum_c (p_c - y_c)^2; d/dbeta = sum_c 2 (p_c - y_c) p_c (z_c - E_p z)
        for (let c = 0; c < k; c++) {
          const residual = p[c] - (labels[i] === c ? 1 : 0);
          loss += residual * residual;
          dBeta += 2 * residual * p[c] * (logits[offset + c] - meanLogit);
        }
      }
      // dT/do = softplus'(o) = sigmoid(o)
      const dOut = (dBeta * -beta * beta * (1 / (1 + Math.exp(-o)))) / batchSize;
      gradient[B3] += dOut;
      dh1.fill(0);
      for (let u = 0; u < hidden; u++) {
        gradient[W3 + u] += dOut * h2[u];
        const da2 = dOut * theta[W3 + u] * (1 - h2[u] * h2[u]);
        gradient[B2 + u] += da2;
        for (let j = 0; j < hidden; j++) gradient[W2 + u * hidden + j] += da2 * h1[j];
        for (let j = 0; j < hidden; j++) dh1[j] += da2 * theta[W2 + u * hidden + j];
      }
      for (let u = 0; u < hidden; u++) {
        const da1 = dh1[u] * (1 - h1[u] * h1[u]);
        gradient[B1 + u] += da1;
        for (let j = 0; j < topK; j++) gradient[W1 + u * topK + j] += da1 * inputs[x + j];
      }
    }
    loss /= batchSize;
    // Adam
    const correction1 = 1 - 0.9 ** step;
    const correction2 = 1 - 0.999 ** step;
    for (let j = 0; j < count; j++) {
      m1[j] = 0.9 * m1[j] + 0.1 * gradient[j];
      m2[j] = 0.999 * m2[j] + 0.001 * gradient[j] * gradient[j];
      theta[j] -= (learningRate * (m1[j] / correction1)) / (Math.sqrt(m2[j] / correction2) + 1e-8);
    }
  }
  const slice = (from: number, length: number): number[] => Array.from(theta.subarray(from, from + length));
  return {
    params: {
      topK,
      hidden,
      inputMean,
      inputScale,
      w1: slice(W1, hidden * topK),
      b1: slice(B1, hidden),
      w2: slice(W2, hidden * hidden),
      b2: slice(B2, hidden),
      w3: slice(W3, hidden),
      b3: theta[B3],
    },
    report: {
      method: `parameterized temperature scaling (Tomani et al. 2022): ${topK} sorted logits -> ${hidden} -> ${hidden} tanh -> |T|, Adam ${steps} steps of ${batchSize} rows`,
      objectiveName: 'mean squared error to the one-hot label (last mini-batch)',
      objective: loss,
      iterations: steps,
      converged: Number.isFinite(loss),
    },
  };
}
