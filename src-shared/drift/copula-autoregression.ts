import normalQuantile from '@stdlib/stats-base-dists-normal-quantile';
import type { RandomSource } from '../random';
import { autoregressInPlace } from './autoregression-kernel';
import { countBelow } from './sorted-search';

/**
 * Unshifted streams like a reference, for calibrating alarm thresholds: a Gaussian-copula
 * autoregression. The reference's normal scores (z = Phi^-1 of its mid-ranks) are fitted by an
 * AR(p), p chosen by AIC (Yule-Walker, Levinson-Durbin); a simulated z path is mapped back through
 * the reference's own quantiles. The stream then has the reference's values in their proportions
 * (ties and two-valued signals included) and its serial dependence, long-run variance included,
 * which a CUSUM's run length hangs on exponentially: a moving block bootstrap loses about
 * sum_k |k| gamma_k / b of that variance at its block joins, and at hour-long targets its
 * thresholds alarmed two to five times as often as stated on AR(1) data.
 */
export interface CopulaAutoregression {
  /** The reference, sorted: the values a stream is made of. */
  sorted: Float64Array;
  /** AR coefficients on the normal scores, lag 1 first, and the innovations' sd. */
  coefficients: Float64Array;
  innovationSd: number;
  /** The reference's normal scores in time order: a path starts from a stretch of them. */
  scores: Float64Array;
  /** z on a grid of GRID_CELLS cells over [-Z_LIMIT, Z_LIMIT] to the index in `sorted`. */
  indexOfCell: Uint32Array;
}

const GRID_CELLS = 1 << 16;
const Z_LIMIT = 8.5;
const CELL_WIDTH = (2 * Z_LIMIT) / GRID_CELLS;
/** AR orders tried: up to 50, and never past a tenth of the reference. */
const MAX_ORDER = 50;

export function fitCopulaAutoregression(reference: Float64Array): CopulaAutoregression {
  const n = reference.length;
  // Sorted without a comparator (one sorting indices by a comparator took 17 ms of a thread's cold
  // start on 20,000 frames); it puts a -0 before a +0 where the comparator kept frame order, which
  // changes no score (tied values share one) and no detector's reading of the values
  const sorted = Float64Array.from(reference).sort();
  // tied values share the score of their mid-rank, kept at their group's first index
  const scoreOfGroupAt = new Float64Array(n);
  for (let lo = 0; lo < n;) {
    let hi = lo + 1;
    while (hi < n && sorted[hi] === sorted[lo]) hi++;
    scoreOfGroupAt[lo] = normalQuantile((lo + hi) / 2 / n, 0, 1);
    lo = hi;
  }
  const scores = new Float64Array(n);
  for (let i = 0; i < n; i++) scores[i] = scoreOfGroupAt[countBelow(sorted, reference[i]!)]!;
  // Tied values share a score, so the scores' variance is below 1 (0.28 for a 0/1 signal with 10 %
  // ones): standardised, the simulated z has unit variance as the quantile map below assumes, and
  // the reference's proportions come back exactly.
  let mean = 0;
  for (let i = 0; i < n; i++) mean += scores[i]!;
  mean /= n;
  let variance = 0;
  for (let i = 0; i < n; i++) variance += (scores[i]! - mean) ** 2;
  const sd = Math.sqrt(variance / n);
  for (let i = 0; i < n; i++) scores[i] = sd > 0 ? (scores[i]! - mean) / sd : 0;
  const { coefficients, innovationVariance } = autoregressionByAic(scores, Math.min(MAX_ORDER, Math.floor(n / 10)));
  // cell c -> how many of the quantile boundaries Phi^-1((i + 1) / n) lie below its centre
  const indexOfCell = new Uint32Array(GRID_CELLS);
  let below = 0;
  let boundary = normalQuantile(1 / n, 0, 1);
  for (let c = 0; c < GRID_CELLS; c++) {
    const z = -Z_LIMIT + (c + 0.5) * CELL_WIDTH;
    while (below < n - 1 && boundary < z) {
      below++;
      boundary = below < n - 1 ? normalQuantile((below + 1) / n, 0, 1) : Infinity;
    }
    indexOfCell[c] = below;
  }
  return { sorted, coefficients, innovationSd: Math.sqrt(innovationVariance), scores, indexOfCell };
}

/**
 * Yule-Walker AR fits of orders 0 to maxOrder by the Levinson-Durbin recursion on the biased
 * autocovariances (so every fit is stationary), the order with the least AIC = n ln(v_p) + 2p.
 */
function autoregressionByAic(
  z: Float64Array,
  maxOrder: number,
): { coefficients: Float64Array; innovationVariance: number } {
  const n = z.length;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += z[i]!;
  mean /= n;
  const gamma = new Float64Array(maxOrder + 1);
  for (let lag = 0; lag <= maxOrder; lag++) {
    let sum = 0;
    for (let i = lag; i < n; i++) sum += (z[i]! - mean) * (z[i - lag]! - mean);
    gamma[lag] = sum / n;
  }
  let best = { coefficients: new Float64Array(0), innovationVariance: gamma[0]! };
  if (!(gamma[0]! > 0)) return best;
  let bestAic = n * Math.log(gamma[0]!);
  let phi = new Float64Array(0);
  let v = gamma[0]!;
  for (let p = 1; p <= maxOrder; p++) {
    let acc = gamma[p]!;
    for (let j = 1; j < p; j++) acc -= phi[j - 1]! * gamma[p - j]!;
    const k = acc / v;
    const next = new Float64Array(p);
    for (let j = 1; j < p; j++) next[j - 1] = phi[j - 1]! - k * phi[p - j - 1]!;
    next[p - 1] = k;
    phi = next;
    v *= 1 - k * k;
    if (!(v > 0)) break;
    const aic = n * Math.log(v) + 2 * p;
    if (aic < bestAic) {
      bestAic = aic;
      best = { coefficients: phi, innovationVariance: v };
    }
  }
  return best;
}

/**
 * Frames a stream simulates at a time: the innovations of a block are drawn, the recursion runs
 * over them in one call of the kernel, and the frames are handed out one by one. The random draws
 * come in the same order as frame by frame, so a stream's frames do not depend on the block size
 * (an even one: the normals come in pairs).
 */
const BLOCK_FRAMES = 2048;

/** A simulated stream from the model, frame by frame, as indices into its sorted reference. */
export class CopulaStream {
  /**
   * The last p scores twice over (lags[i] = lags[i + p], and lags[at + j] = z_{t-1-j}), so the AR sum reads
   * p consecutive values with no wrap-around: the simulation runs tens of millions of frames.
   */
  private readonly lags: Float64Array;
  private at = 0;
  /** The current block's scores, then its frames' indices; `next` is the next frame to hand out. */
  private readonly scores = new Float64Array(BLOCK_FRAMES);
  private readonly indices = new Uint32Array(BLOCK_FRAMES);
  private next = BLOCK_FRAMES;

  constructor(
    private readonly model: CopulaAutoregression,
    private readonly random: RandomSource,
  ) {
    const p = model.coefficients.length;
    this.lags = new Float64Array(2 * Math.max(1, p));
    // start from a stretch of the reference's own scores: the path is in its stationary regime at once
    const start = Math.floor(random() * Math.max(1, model.scores.length - p));
    for (let j = 0; j < p; j++) this.lags[j] = this.lags[j + p] = model.scores[start + p - 1 - j]!;
  }

  nextIndex(): number {
    if (this.next === BLOCK_FRAMES) this.simulateBlock();
    return this.indices[this.next++]!;
  }

  /**
   * The next BLOCK_FRAMES frames: z_t = sd e_t + sum_j phi_j z_{t-1-j} (autoregression-kernel.ts,
   * the AR sum in WebAssembly: a profiled hour's calibration spent 0.68 s of its 1.5 s a thread in
   * that sum in JavaScript), each z mapped to its reference value through the quantile grid.
   */
  private simulateBlock(): void {
    const { coefficients, innovationSd, indexOfCell } = this.model;
    const scores = this.scores;
    // Box-Muller, a pair of normals from each two uniforms: a block holds an even number of frames,
    // so the pairs fall as they did when each frame drew its own normal and kept the other for the next
    const random = this.random;
    for (let t = 0; t < BLOCK_FRAMES; t += 2) {
      let u = random();
      while (u === 0) u = random();
      const radius = Math.sqrt(-2 * Math.log(u));
      const angle = 2 * Math.PI * random();
      scores[t] = innovationSd * (radius * Math.cos(angle));
      scores[t + 1] = innovationSd * (radius * Math.sin(angle));
    }
    this.at = autoregressInPlace(coefficients, this.lags, this.at, scores, BLOCK_FRAMES);
    for (let t = 0; t < BLOCK_FRAMES; t++) {
      const cell = Math.floor((scores[t]! + Z_LIMIT) / CELL_WIDTH);
      this.indices[t] = indexOfCell[cell < 0 ? 0 : cell >= GRID_CELLS ? GRID_CELLS - 1 : cell]!;
    }
    this.next = 0;
  }
}
