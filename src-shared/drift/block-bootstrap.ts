import type { RandomSource } from '../random';

/**
 * The moving block bootstrap (Kuensch 1989) of a window of a stream, for the intervals of the
 * label-free estimates and of calibration over time: blocks of consecutive frames, each starting at
 * a uniform position, laid end to end. Whole blocks keep the stream's autocorrelation up to the
 * block length, which an i.i.d. resample would lose: a video's confidence moves slowly, and
 * intervals from shuffled frames would be too narrow. (The alarm thresholds need the long-run
 * variance exactly and are simulated by copula-autoregression.ts instead.)
 */
export class BlockBootstrapStream {
  private at = 0;
  private left = 0;

  constructor(
    private readonly reference: Float64Array,
    readonly blockFrames: number,
    private readonly random: RandomSource,
  ) {
    if (reference.length < 2 || !(blockFrames >= 1 && blockFrames <= reference.length))
      throw new RangeError(`a block of ${blockFrames} frames from a reference of ${reference.length}`);
  }

  next(): number {
    return this.reference[this.nextIndex()]!;
  }

  /** The index in the reference of the next frame drawn (to resample paired columns alike). */
  nextIndex(): number {
    if (this.left === 0) {
      this.at = Math.floor(this.random() * (this.reference.length - this.blockFrames + 1));
      this.left = this.blockFrames;
    }
    this.left--;
    return this.at++;
  }
}

/** Block length in integrated autocorrelation times (blockFramesFor). */
const BLOCK_TAUS = 10;

/** Lags read for the autocorrelation time: beyond this a reference says little about its own memory. */
const MAX_LAG = 2000;

/**
 * The block length: the larger of n^(1/3) (the rate that balances the bootstrap's bias and variance,
 * Hall, Horowitz and Jing 1995) and ten integrated autocorrelation times
 * (integratedAutocorrelationTime), at most a quarter of the reference.
 * The long-run variance a block bootstrap reproduces falls short by about sum_k |k| gamma_k / b
 * (Kuensch 1989); for an AR(1) stream that is 2 rho / (1 - rho^2) / b, a quarter at b = 2 tau with
 * rho = 0.8, a few per cent at b = 10 tau. A constant reference has no autocorrelation to keep: n^(1/3).
 */
export function blockFramesFor(reference: Float64Array): number {
  const n = reference.length;
  const rateLength = Math.ceil(Math.cbrt(n));
  const tau = integratedAutocorrelationTime(reference);
  return Math.max(1, Math.min(Math.floor(n / 4), Math.max(rateLength, Math.ceil(BLOCK_TAUS * tau))));
}

/**
 * tau = 1 + 2 sum_k rho_k, summed until the first lag whose autocorrelation is not positive (Geyer
 * 1992's initial positive sequence, in its simplest form) and at most MAX_LAG or a quarter of the
 * series: how many frames one independent frame is worth. A constant series: 1.
 */
export function integratedAutocorrelationTime(series: Float64Array): number {
  const n = series.length;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += series[i]!;
  mean /= n;
  // centred once: the same deviations as computed term by term, so the same sums, at one multiply-add a term
  const centred = new Float64Array(n);
  for (let i = 0; i < n; i++) centred[i] = series[i]! - mean;
  let variance = 0;
  for (let i = 0; i < n; i++) variance += centred[i]! ** 2;
  let tau = 1;
  if (!(variance > 0)) return tau;
  const lags = Math.min(MAX_LAG, Math.floor(n / 4));
  for (let lag = 1; lag <= lags; lag++) {
    let sum = 0;
    for (let i = lag; i < n; i++) sum += centred[i]! * centred[i - lag]!;
    const rho = sum / variance;
    if (!(rho > 0)) break;
    tau += 2 * rho;
  }
  return tau;
}

/**
 * Bootstrap replicates of the label-free estimates and of calibration over time unless told
 * otherwise: the one default of `knob estimate`, `knob timeline`, the desk's Field tab and the report.
 */
export const DEFAULT_REPLICATES = 200;
