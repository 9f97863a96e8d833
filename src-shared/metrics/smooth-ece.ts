import FFT from 'fft.js';
import { metric, type MetricValue } from './metric-value';
import { ValuesBoundedCache } from './values-bounded-cache';

/**
 * SmoothECE (Blasiok & Nakkiran 2023) computed exactly as relplot does (DEFINITIONS.md 4.6), so
 * values agree with relplot to ~1e-6 (to ~1e-15 on the reference fixture):
 * - residuals r_i = f_i - y_i and weights 1 are split linearly onto a grid of
 *   M = floor(max(2000, round(20/sigma)) / 2) + 1 nodes on [0, 1];
 * - the grid is mirrored at both ends and convolved with a Gaussian of width sigma sampled on
 *   linspace(0, 1, M) around 0.5 (one reflection per side, support truncated to +-0.5);
 * - both are interpolated onto a mesh of max(200, round(10/sigma)) points;
 * - smECE_sigma = sum |r_hat| dens / sum dens with r_hat = ys / dens, dens = smoothed weights + 1e-4;
 * - the bandwidth sigma* solves sigma = smECE_sigma: sigma = 1 if that already holds, else ten
 *   bisection steps on [0, 1] keeping the upper end (a multiple of 2^-10), predicate
 *   "sigma < 0.001 or sigma < smECE_sigma".
 * Rounding follows Python's round (half to even). Cost: O(n) per distinct grid plus O(M log M)
 * per bandwidth tried (the convolution by FFT); nothing quadratic.
 */
function pythonRound(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

export function linspace(count: number): Float64Array {
  const out = new Float64Array(count);
  const step = 1 / (count - 1);
  for (let i = 0; i < count; i++) out[i] = i * step;
  out[count - 1] = 1;
  return out;
}

/** Splits each weight between the two grid nodes around its position (relplot smooth_round_to_grid). */
export function splitOntoGrid(
  positions: Float64Array,
  weights: Float64Array | null,
  nodes: number,
  out: Float64Array,
): void {
  out.fill(0);
  const scale = nodes - 1;
  for (let i = 0; i < positions.length; i++) {
    const x = positions[i] * scale;
    const bin = gridCellOf(positions[i], nodes);
    const frac = x - bin;
    const w = weights === null ? 1 : weights[i];
    out[bin] += (1 - frac) * w;
    out[bin + 1] += frac * w;
  }
}

export function gaussianOnGrid(nodes: number, sigma: number): Float64Array {
  const t = linspace(nodes);
  const out = new Float64Array(nodes);
  const norm = Math.sqrt(2 * Math.PI) * sigma;
  for (let i = 0; i < nodes; i++) out[i] = Math.exp(-((t[i] - 0.5) * (t[i] - 0.5)) / (2 * sigma * sigma)) / norm;
  return out;
}

/**
 * relplot ReflectedGaussianKernel.convolve: mirror, 'valid' convolution, centre slice of length M:
 *   out[j] = sum_k extended[M/2 + j + k] kernel[M - 1 - k],  extended = mirror | values | mirror,
 * which is entry floor(M/2) + M - 1 + j of the full linear convolution extended * kernel, computed by
 * FFT (fft.js): O(M log M) instead of the direct sum's O(M^2) (M >= 1001, so the direct sum cost
 * ~70 ms per SmoothECE whatever n was). The kernel is real, so the two series a bandwidth smooths
 * (residuals and mass) go through one complex transform as its real and imaginary parts, and the
 * kernel's spectrum is taken once per (M, sigma) and kept (`smootherFor`): the bandwidth search
 * visits the same dyadic sigmas for every sample set, as a bootstrap's resamples do. The FFT path
 * agrees with the direct sum to ~1e-15 relative (tested).
 */
export class ReflectedGaussianSmoother {
  readonly nodes: number;
  private readonly workspace: FftWorkspace;
  /** The kernel's spectrum, interleaved complex. */
  readonly kernelSpectrum: Float64Array;

  constructor(nodes: number, sigma: number) {
    this.nodes = nodes;
    let size = 2;
    while (size < 4 * nodes - 3) size <<= 1;
    this.workspace = workspaceFor(size);
    const { signal } = this.workspace;
    signal.fill(0);
    const kernel = gaussianOnGrid(nodes, sigma);
    for (let i = 0; i < nodes; i++) signal[2 * i] = kernel[i];
    this.kernelSpectrum = new Float64Array(2 * size);
    this.workspace.fft.transform(this.kernelSpectrum, signal);
  }

  /** Both series smoothed, into `outRe` and `outIm` (length M each; `outIm` null when `im` is). */
  smoothPairInto(re: Float64Array, im: Float64Array | null, outRe: Float64Array, outIm: Float64Array | null): void {
    const m = this.nodes;
    const { fft, signal, spectrum, convolved } = this.workspace;
    signal.fill(0);
    // extended = mirror | values | mirror, interleaved as complex numbers re + i im
    for (let i = 0; i < m - 1; i++) signal[2 * i] = re[m - 1 - i];
    for (let i = 0; i < m; i++) signal[2 * (m - 1 + i)] = re[i];
    for (let i = 1; i < m; i++) signal[2 * (2 * m - 2 + i)] = re[m - 1 - i];
    if (im !== null) {
      for (let i = 0; i < m - 1; i++) signal[2 * i + 1] = im[m - 1 - i];
      for (let i = 0; i < m; i++) signal[2 * (m - 1 + i) + 1] = im[i];
      for (let i = 1; i < m; i++) signal[2 * (2 * m - 2 + i) + 1] = im[m - 1 - i];
    }
    fft.transform(spectrum, signal);
    const kernel = this.kernelSpectrum;
    for (let i = 0; i < spectrum.length; i += 2) {
      const real = spectrum[i] * kernel[i] - spectrum[i + 1] * kernel[i + 1];
      spectrum[i + 1] = spectrum[i] * kernel[i + 1] + spectrum[i + 1] * kernel[i];
      spectrum[i] = real;
    }
    fft.inverseTransform(convolved, spectrum);
    const first = (m >> 1) + m - 1;
    for (let j = 0; j < m; j++) outRe[j] = convolved[2 * (first + j)];
    if (outIm !== null) for (let j = 0; j < m; j++) outIm[j] = convolved[2 * (first + j) + 1];
  }

  smooth(values: Float64Array): Float64Array {
    const out = new Float64Array(this.nodes);
    this.smoothPairInto(values, null, out, null);
    return out;
  }
}

/** One transform size's FFT tables and scratch, shared by every smoother of that size. */
interface FftWorkspace {
  fft: FFT;
  signal: Float64Array;
  spectrum: Float64Array;
  convolved: Float64Array;
}

const workspaces = new Map<number, FftWorkspace>();

function workspaceFor(size: number): FftWorkspace {
  let workspace = workspaces.get(size);
  if (workspace === undefined) {
    workspace = {
      fft: new FFT(size),
      signal: new Float64Array(2 * size),
      spectrum: new Float64Array(2 * size),
      convolved: new Float64Array(2 * size),
    };
    workspaces.set(size, workspace);
  }
  return workspace;
}

/**
 * Smoothers kept by (M, sigma), so a kernel's spectrum is taken once. Bounded by the values their
 * spectra hold (8 Mi doubles, 64 MiB): the oldest go first. A bandwidth search visits about a
 * dozen sigmas (8 Ki values each at M = 1001); a bootstrap's resamples revisit mostly the same. A
 * kept-class trace's bound (kept-class-smooth-ece-bound.ts) may visit hundreds, and push those out.
 */
const smoothers = new ValuesBoundedCache<string, ReflectedGaussianSmoother>(
  8 * 1024 * 1024,
  (smoother) => smoother.kernelSpectrum.length,
);

export function smootherFor(nodes: number, sigma: number): ReflectedGaussianSmoother {
  return smoothers.get(`${nodes}:${sigma}`, () => new ReflectedGaussianSmoother(nodes, sigma));
}

/** The direct O(M^2) sum of the same convolution: the definition the FFT path is tested against. */
export function reflectedGaussianSmoothDirect(values: Float64Array, sigma: number): Float64Array {
  const m = values.length;
  const kernel = gaussianOnGrid(m, sigma);
  const extended = new Float64Array(3 * m - 2);
  for (let i = 0; i < m - 1; i++) extended[i] = values[m - 1 - i];
  extended.set(values, m - 1);
  for (let i = 1; i < m; i++) extended[2 * m - 2 + i] = values[m - 1 - i];
  const out = new Float64Array(m);
  const start = m >> 1;
  for (let j = 0; j < m; j++) {
    const base = start + j;
    let sum = 0;
    for (let k = 0; k < m; k++) sum += extended[base + k] * kernel[m - 1 - k];
    out[j] = sum;
  }
  return out;
}

/** relplot interpolate: value at t of the function i/(len - 1) -> y[i], linear between nodes. */
export function interpolateGrid(t: number, grid: Float64Array): number {
  const i = gridCellOf(t, grid.length);
  const residual = gridCellResidual(t, i, grid.length);
  return grid[i] * (1 - residual) + grid[i + 1] * residual;
}

/** The cell of a grid of `count` nodes on [0, 1] that interpolateGrid reads t from. */
export function gridCellOf(t: number, count: number): number {
  const i = Math.trunc(t * (count - 1));
  return i < 0 ? 0 : i > count - 2 ? count - 2 : i;
}

/** Where t lies in cell i of interpolateGrid's grid: the weight of node i + 1. */
export function gridCellResidual(t: number, i: number, count: number): number {
  const bucket = 1 / (count - 1);
  return (t - i * bucket) / bucket;
}

/** Grid nodes relplot uses for a bandwidth. */
export function smoothGridNodes(sigma: number): number {
  return Math.floor(Math.max(2000, pythonRound(20 / sigma)) / 2) + 1;
}

/** Evaluation mesh size relplot uses for a bandwidth. */
export function smoothMeshPoints(sigma: number): number {
  return Math.max(pythonRound(10 / sigma), 200);
}

/**
 * Gridded sufficient statistics of the (confidence, correct) pairs: residual mass and sample mass
 * per node. The batch computation and the streaming sketch both end here.
 */
export interface SmoothGrid {
  residual: Float64Array;
  mass: Float64Array;
}

export type GridProvider = (nodes: number) => SmoothGrid;

export function gridProviderFromSamples(confidence: Float64Array, correct: ArrayLike<number>): GridProvider {
  const residuals = new Float64Array(confidence.length);
  for (let i = 0; i < confidence.length; i++) residuals[i] = confidence[i] - correct[i];
  const cache = new Map<number, SmoothGrid>();
  return (nodes) => {
    let grid = cache.get(nodes);
    if (grid === undefined) {
      const residual = new Float64Array(nodes);
      const mass = new Float64Array(nodes);
      splitOntoGrid(confidence, residuals, nodes, residual);
      splitOntoGrid(confidence, null, nodes, mass);
      grid = { residual, mass };
      cache.set(nodes, grid);
    }
    return grid;
  };
}

export interface SmoothCurve {
  t: Float64Array;
  /** r_hat(t) = smoothed (f - y) / density */
  residual: Float64Array;
  density: Float64Array;
}

export function smoothCurve(grids: GridProvider, sigma: number, meshPoints = smoothMeshPoints(sigma)): SmoothCurve {
  const nodes = smoothGridNodes(sigma);
  const grid = grids(nodes);
  const ys = new Float64Array(nodes);
  const dens = new Float64Array(nodes);
  smootherFor(nodes, sigma).smoothPairInto(grid.residual, grid.mass, ys, dens);
  const t = linspace(meshPoints);
  const residual = new Float64Array(meshPoints);
  const density = new Float64Array(meshPoints);
  for (let i = 0; i < meshPoints; i++) {
    const d = interpolateGrid(t[i], dens) + 1e-4;
    density[i] = d;
    residual[i] = interpolateGrid(t[i], ys) / d;
  }
  return { t, residual, density };
}

/**
 * smECE's two sums at a bandwidth (relplot smooth_ece, normalised by the summed density): the
 * numerator sum |r_hat| dens and the denominator sum dens over the mesh.
 */
export function smoothEceTerms(grids: GridProvider, sigma: number): { numerator: number; denominator: number } {
  const curve = smoothCurve(grids, sigma);
  let numerator = 0;
  let denominator = 0;
  for (let i = 0; i < curve.t.length; i++) {
    numerator += Math.abs(curve.residual[i]) * curve.density[i];
    denominator += curve.density[i];
  }
  return { numerator, denominator };
}

/** smECE at a given bandwidth. */
export function smoothEceAtBandwidth(grids: GridProvider, sigma: number): number {
  const { numerator, denominator } = smoothEceTerms(grids, sigma);
  return numerator / denominator;
}

/** relplot search_param's least bandwidth and its bisection steps. */
const BANDWIDTH_EPS = 0.001;
const BISECTION_STEPS = 10;

/**
 * relplot search_param over the predicate "sigma < smECE_sigma": 1 if it holds there, else ten
 * bisection steps on [0, 1] (a step below eps counts as holding), keeping the upper end, which
 * goes to `onEnd`. `holds` may answer 'either' where the predicate's truth is not known (the full
 * trace of a kept-class trace, kept-class-smooth-ece-bound.ts): then every end a search could
 * reach goes to `onEnd`, each once (1 too: reported at the start, not again at the end of the
 * path where every step holds), but for the searches on from (start, end) that `follow`
 * declines. A known predicate reaches one end, relplot's.
 */
export function forEachReachableBandwidth(
  holds: (sigma: number) => boolean | 'either',
  onEnd: (sigma: number) => void,
  follow: (start: number, end: number) => boolean = () => true,
  eps = BANDWIDTH_EPS,
): void {
  const atOne = 1 < eps ? true : holds(1);
  if (atOne !== false) onEnd(1);
  if (atOne === true) return;
  const bisect = (start: number, end: number, step: number): void => {
    if (!follow(start, end)) return;
    if (step === BISECTION_STEPS) {
      if (start !== 1 || atOne === false) onEnd(start);
      return;
    }
    const mid = (start + end) / 2;
    const midHolds = mid < eps ? true : holds(mid);
    if (midHolds !== false) bisect(start, mid, step + 1);
    if (midHolds !== true) bisect(mid, end, step + 1);
  };
  bisect(1, 0, 0);
}

/** The bandwidth relplot's search reaches, and smECE there (computed once per bandwidth tried). */
function searchBandwidth(grids: GridProvider, eps: number): { sigma: number; value: number } {
  const values = new Map<number, number>();
  const valueAt = (sigma: number): number => {
    let value = values.get(sigma);
    if (value === undefined) values.set(sigma, (value = smoothEceAtBandwidth(grids, sigma)));
    return value;
  };
  let sigma = NaN;
  forEachReachableBandwidth(
    (s) => s < valueAt(s),
    (end) => (sigma = end),
    undefined,
    eps,
  );
  return { sigma, value: valueAt(sigma) };
}

export function smoothEceBandwidth(grids: GridProvider, eps = BANDWIDTH_EPS): number {
  return searchBandwidth(grids, eps).sigma;
}

export interface SmoothEceResult {
  value: MetricValue;
  sigma: number;
}

export function smoothEce(
  confidence: Float64Array,
  correct: ArrayLike<number>,
  approximation?: string,
): SmoothEceResult {
  return smoothEceFromGrids(gridProviderFromSamples(confidence, correct), approximation);
}

export function smoothEceFromGrids(grids: GridProvider, approximation?: string): SmoothEceResult {
  const { sigma, value } = searchBandwidth(grids, BANDWIDTH_EPS);
  return {
    sigma,
    value: metric(
      'SmoothECE',
      `SmoothECE(top-label, reflected Gaussian kernel, automatic bandwidth sigma* = ${sigma}, relplot grid)`,
      value,
      approximation,
    ),
  };
}
