import { assignBins, binningIdentity, equalWidthEdges, type BinningSpec, type EqualWidthSpec } from './binning';
import { binStatisticsOf } from './bin-statistics';
import type { BinTotals } from './calibration-error';
import { levelPercent, resample } from './bootstrap';
import { wilsonInterval } from './interval-variants';
import { gridProviderFromSamples, smoothCurve, smoothEceBandwidth } from './smooth-ece';
import { seededRandom } from '../random';
import { stopIfCancelled, type CancelSignal } from '../cancel-signal';

/** Data for the reliability diagram, confidence histogram and smooth reliability curve. */
export interface ReliabilityBin {
  lo: number;
  hi: number;
  count: number;
  meanConfidence: number | null;
  accuracy: number | null;
  /** accuracy - mean confidence (negative: over-confident) */
  gap: number | null;
  /** Wilson score interval of the accuracy, at the given z. */
  wilsonLo: number | null;
  wilsonHi: number | null;
}

export interface ReliabilityDiagram {
  identity: string;
  bins: ReliabilityBin[];
}

/** Which pairs a diagram is of: the top label's (confidence, correct), or one class's (p_k, y = k). */
export type ReliabilitySubject = { kind: 'top-label' } | { kind: 'class'; name: string };

export function reliabilityDiagram(
  confidence: Float64Array,
  correct: Uint8Array,
  spec: BinningSpec,
  subject: ReliabilitySubject = { kind: 'top-label' },
): ReliabilityDiagram {
  const bins = assignBins(confidence, spec);
  return diagramOfStatistics(
    binStatisticsOf(bins.binOf, bins.binCount, confidence, correct),
    bins.edges,
    spec,
    subject,
  );
}

/**
 * The one-vs-rest diagram (p_k against y = k) of every class from its statistics under an
 * equal-width `spec` (classwiseStatisticsUnder, the metric suite's classwise pass: the same exact
 * sums as one diagram per gathered column, so the same diagrams, without a pass per class).
 */
export function classReliabilityDiagrams(
  perClass: readonly BinTotals[],
  spec: EqualWidthSpec,
  classNames: readonly string[],
): ReliabilityDiagram[] {
  const edges = equalWidthEdges(spec.bins);
  return perClass.map((stats, c) => diagramOfStatistics(stats, edges, spec, { kind: 'class', name: classNames[c]! }));
}

function diagramOfStatistics(
  stats: BinTotals,
  edges: Float64Array,
  spec: BinningSpec,
  subject: ReliabilitySubject,
): ReliabilityDiagram {
  const out: ReliabilityBin[] = [];
  for (let b = 0; b < stats.binCount; b++) {
    const n = stats.counts[b];
    const lo = b < spec.bins ? edges[b] : 1;
    const hi = b < spec.bins ? edges[b + 1] : 1;
    if (n === 0) {
      out.push({ lo, hi, count: 0, meanConfidence: null, accuracy: null, gap: null, wilsonLo: null, wilsonHi: null });
      continue;
    }
    const acc = stats.positiveRate(b);
    const conf = stats.meanScore(b);
    // the app's one Wilson interval, around the accuracy shown (it contains it, 0 and 1 exactly)
    const wilson = wilsonInterval(acc, n);
    out.push({
      lo,
      hi,
      count: n,
      meanConfidence: conf,
      accuracy: acc,
      gap: acc - conf,
      wilsonLo: wilson.lo,
      wilsonHi: wilson.hi,
    });
  }
  const of = subject.kind === 'top-label' ? 'top-label' : `class ${subject.name}: p_k against y = k`;
  return { identity: `reliability(${of}, ${binningIdentity(spec)}, Wilson 95 % intervals)`, bins: out };
}

/** Counts of confidences in equal-width bins over [0, 1] (last bin closed). */
export function confidenceHistogram(
  confidence: Float64Array,
  bins = 20,
): { edges: Float64Array; counts: Float64Array } {
  const assigned = assignBins(confidence, { scheme: 'equal-width', bins, edgeRule: 'left-closed' });
  const counts = new Float64Array(bins);
  for (let i = 0; i < assigned.binOf.length; i++) counts[assigned.binOf[i]]++;
  return { edges: assigned.edges, counts };
}

export interface SmoothReliabilityCurve {
  identity: string;
  sigma: number;
  t: Float64Array;
  /** smoothed accuracy at confidence t: t - r_hat(t) */
  accuracy: Float64Array;
  density: Float64Array;
  /**
   * How many samples support the curve at t: the Gaussian-kernel-weighted count at bandwidth
   * sigma (about the samples within sigma of t). Where it is small the curve is extrapolation.
   */
  support: Float64Array;
  bandLo: Float64Array;
  bandHi: Float64Array;
}

/** The curve as plain arrays (what the API carries and the figures draw). */
export interface SmoothCurveArrays {
  identity: string;
  t: number[];
  accuracy: number[];
  bandLo: number[];
  bandHi: number[];
  support: number[];
}

export function smoothCurveArrays(curve: SmoothReliabilityCurve): SmoothCurveArrays {
  return {
    identity: curve.identity,
    t: Array.from(curve.t),
    accuracy: Array.from(curve.accuracy),
    bandLo: Array.from(curve.bandLo),
    bandHi: Array.from(curve.bandHi),
    support: Array.from(curve.support),
  };
}

/**
 * relplot-style smooth reliability curve at the SmoothECE bandwidth, with a pointwise percentile
 * bootstrap band (seeded; the bandwidth is kept fixed across resamples), widened to the curve
 * where the resamples leave it out, as every interval the app shows contains its estimate.
 */
export function smoothReliabilityCurve(
  confidence: Float64Array,
  correct: Uint8Array,
  options: { meshPoints?: number; replicates?: number; level?: number; seed?: number; signal?: CancelSignal } = {},
): SmoothReliabilityCurve {
  const meshPoints = options.meshPoints ?? 101;
  const replicates = options.replicates ?? 100;
  const level = options.level ?? 0.95;
  const seed = options.seed ?? 0;
  const sigma = smoothEceBandwidth(gridProviderFromSamples(confidence, correct));
  const curveOf = (c: Float64Array, y: Uint8Array): Float64Array => {
    const curve = smoothCurve(gridProviderFromSamples(c, y), sigma, meshPoints);
    return curve.t.map((t, i) => t - curve.residual[i]);
  };
  const main = smoothCurve(gridProviderFromSamples(confidence, correct), sigma, meshPoints);
  const accuracy = main.t.map((t, i) => t - main.residual[i]);
  const draws: Float64Array[] = [];
  const random = seededRandom(seed);
  const indices = new Uint32Array(confidence.length);
  for (let r = 0; r < replicates; r++) {
    stopIfCancelled(options.signal, 'the smooth curve band was cancelled');
    for (let i = 0; i < indices.length; i++) indices[i] = Math.floor(random() * indices.length);
    draws.push(curveOf(resample(confidence, indices), resample(correct, indices)));
  }
  const bandLo = new Float64Array(meshPoints);
  const bandHi = new Float64Array(meshPoints);
  const column = new Float64Array(replicates);
  const alpha = (1 - level) / 2;
  for (let i = 0; i < meshPoints; i++) {
    for (let r = 0; r < replicates; r++) column[r] = draws[r][i];
    column.sort();
    // a band that leaves out the curve it is drawn around is widened to it (a skewed resampling)
    bandLo[i] = Math.min(column[Math.floor(alpha * (replicates - 1))], accuracy[i]);
    bandHi[i] = Math.max(column[Math.ceil((1 - alpha) * (replicates - 1))], accuracy[i]);
  }
  return {
    identity: `smooth reliability(top-label, reflected Gaussian, sigma = ${sigma}, ${levelPercent(level)} bootstrap band of ${replicates} resamples, seed ${seed}, containing the curve)`,
    sigma,
    t: main.t,
    accuracy,
    density: main.density,
    support: kernelSupport(confidence, main.t, sigma),
    bandLo,
    bandHi,
  };
}

/**
 * Gaussian-kernel-weighted sample counts at each t (bandwidth sigma), from a 256-cell histogram of
 * the values: sum_i exp(-(t - c_i)^2 / (2 sigma^2)) to within a cell width, at any sample count.
 */
export function kernelSupport(values: Float64Array, t: Float64Array, sigma: number): Float64Array {
  const cells = 256;
  const counts = new Float64Array(cells);
  for (let i = 0; i < values.length; i++) counts[Math.min(cells - 1, Math.max(0, Math.floor(values[i] * cells)))]++;
  const out = new Float64Array(t.length);
  const scale = 1 / (2 * sigma * sigma);
  for (let j = 0; j < t.length; j++) {
    let sum = 0;
    for (let c = 0; c < cells; c++) {
      if (counts[c] === 0) continue;
      const d = t[j] - (c + 0.5) / cells;
      sum += counts[c] * Math.exp(-d * d * scale);
    }
    out[j] = sum;
  }
  return out;
}
