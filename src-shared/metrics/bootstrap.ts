import { stopIfCancelled, type CancelSignal } from '../cancel-signal';
import { seededRandom } from '../random';
import { markNewResample } from './draw-counts';
import { percentileOfSorted } from './order-statistics';

/**
 * Percentile bootstrap confidence intervals for any statistic of a sample, seeded so the same
 * data and seed give the same interval. The statistic receives the resampled indices.
 */
export interface BootstrapInterval {
  lo: number;
  hi: number;
  level: number;
  replicates: number;
  seed: number;
  identity: string;
}

export interface BootstrapOptions {
  replicates?: number;
  level?: number;
  seed?: number;
  /** Polled between resamples: a cancelled bootstrap throws CANCELLED within one resample. */
  signal?: CancelSignal;
  /**
   * Only the replicates [from, to) of the `replicates`, each the same resample as in the whole
   * run (threads that share a bootstrap each draw a range); default all.
   */
  replicateRange?: { from: number; to: number };
}

export function bootstrapInterval(
  sampleCount: number,
  statistic: (indices: Uint32Array) => number,
  options: BootstrapOptions = {},
): BootstrapInterval {
  const values = new Float64Array(options.replicates ?? 200);
  eachResample(sampleCount, options, (indices, r) => {
    values[r] = statistic(indices);
  });
  return percentileInterval(values, options, '');
}

/** Draws `replicates` resamples of n indices (seeded) and hands each to `visit`. */
export function eachResample(
  n: number,
  options: BootstrapOptions,
  visit: (indices: Uint32Array, replicate: number) => void,
): void {
  const replicates = options.replicates ?? 200;
  const { from, to } = options.replicateRange ?? { from: 0, to: replicates };
  // replicate r draws the n indices after r n draws, whichever replicates this call makes
  const random = seededRandom(options.seed ?? 0, from * n);
  const indices = new Uint32Array(n);
  const end = Math.min(to, replicates);
  for (let r = from; r < end; r++) {
    stopIfCancelled(options.signal, 'the bootstrap was cancelled');
    for (let i = 0; i < n; i++) indices[i] = Math.floor(random() * n);
    markNewResample(indices);
    visit(indices, r);
  }
}

/** An interval's level as its identity names it: 95 %, 97.5 %, 99.2857 % (six significant digits). */
export function levelPercent(level: number): string {
  return `${Number((level * 100).toPrecision(6))} %`;
}

/**
 * The percentile interval of the replicates' statistics (sorted in place), linear interpolation
 * between order statistics (numpy percentile 'linear'); `what` qualifies the identity
 * ('stratified (3 groups) ', or '' for a plain bootstrap).
 */

export function percentileInterval(values: Float64Array, options: BootstrapOptions, what: string): BootstrapInterval {
  const level = options.level ?? 0.95;
  const replicates = options.replicates ?? 200;
  const seed = options.seed ?? 0;
  values.sort();
  const alpha = (1 - level) / 2;
  return {
    lo: percentileOfSorted(values, alpha),
    hi: percentileOfSorted(values, 1 - alpha),
    level,
    replicates,
    seed,
    identity: `${levelPercent(level)} ${what}percentile bootstrap, ${replicates} resamples, seed ${seed}`,
  };
}

/**
 * The level's percentile interval of replicates (sorted in place, numpy 'linear' percentiles),
 * widened to contain `estimate` when there is one: an interval never leaves out its own estimate.
 */
export function percentileIntervalContaining(
  replicates: Float64Array,
  estimate: number | null,
  level = 0.95,
): { low: number; high: number } {
  replicates.sort();
  const alpha = (1 - level) / 2;
  const low = percentileOfSorted(replicates, alpha);
  const high = percentileOfSorted(replicates, 1 - alpha);
  return estimate === null ? { low, high } : { low: Math.min(low, estimate), high: Math.max(high, estimate) };
}

/** Gathers a resample of the columns a metric needs. */
export function resample<T extends Float64Array | Uint8Array | Int32Array>(
  values: T,
  indices: Uint32Array,
  stride = 1,
): T {
  const out = new (values.constructor as new (length: number) => T)(indices.length * stride);
  for (let i = 0; i < indices.length; i++) {
    const from = indices[i] * stride;
    for (let k = 0; k < stride; k++) out[i * stride + k] = values[from + k];
  }
  return out;
}
