import { KnobError } from '../errors';
import { BinTable, type EdgeRule } from './bin-location';
import { orderStatistics } from './order-statistics';

/**
 * Bin definitions for binned calibration metrics (DEFINITIONS.md 4.1-4.2).
 *
 * Equal-width edges are numpy's linspace(0, 1, B + 1): e_j = j (1/B), e_B = 1 (so e_3 of B = 5 is
 * 0.6000000000000001, as in netcal). Edge rules: bin-location.ts.
 * Equal-mass bins cut the sorted values into B groups of ceil/floor(n/B) points (np.array_split:
 * the first n mod B groups get the extra point); their inner edges are either the midpoint
 * between adjacent groups (uncertainty-calibration) or numpy's linear quantile j/B (netcal).
 */
export type MassEdges = 'midpoint' | 'quantile';

export type BinningSpec =
  | { scheme: 'equal-width'; bins: number; edgeRule: EdgeRule }
  | { scheme: 'equal-mass'; bins: number; massEdges: MassEdges; edgeRule: EdgeRule };
export type EqualWidthSpec = Extract<BinningSpec, { scheme: 'equal-width' }>;

const EDGE_RULE_LABELS: Record<EdgeRule, string> = {
  'left-closed': '[lo,hi) last closed',
  'right-closed': '(lo,hi] first closed',
  'one-in-extra-bin': '[lo,hi) with 1.0 in an extra bin',
};

export function binningIdentity(spec: BinningSpec): string {
  const scheme = spec.scheme === 'equal-width' ? 'equal-width' : `equal-mass (${spec.massEdges} edges)`;
  return `${spec.bins} ${scheme} bins, ${EDGE_RULE_LABELS[spec.edgeRule]}`;
}

export interface Bins {
  /** Bin index of every value. */
  binOf: Int32Array;
  binCount: number;
  /** B + 1 edges, from 0 to 1. */
  edges: Float64Array;
}

export function equalWidthEdges(bins: number): Float64Array {
  const edges = new Float64Array(bins + 1);
  const step = 1 / bins;
  for (let j = 0; j < bins; j++) edges[j] = j * step;
  edges[bins] = 1;
  return edges;
}

/** The ranks (0-based, ascending order) whose values equal-mass edges are made of. */
export function equalMassRanks(n: number, bins: number, massEdges: MassEdges): number[] {
  if (massEdges === 'quantile') {
    return Array.from({ length: bins + 1 }, (_, j) => (j / bins) * (n - 1)).flatMap((p) => [
      Math.floor(p),
      Math.min(n - 1, Math.floor(p) + 1),
    ]);
  }
  const base = Math.floor(n / bins);
  const extra = n % bins;
  const ranks: number[] = [];
  let end = 0;
  for (let j = 0; j < bins - 1; j++) {
    end += base + (j < extra ? 1 : 0);
    ranks.push(end - 1, end);
  }
  return ranks;
}

/**
 * The index, in equalMassRanks, of the larger of the two order statistics inner edge j (1..B-1) is
 * made of: values of the ranks above it lie above the edge, those of the ranks below it below.
 */
export function equalMassUpperRankIndex(j: number, massEdges: MassEdges): number {
  return massEdges === 'quantile' ? 2 * j + 1 : 2 * j - 1;
}

/**
 * Edges from the values at equalMassRanks: numpy's linear quantile j/B (n - 1), or the midpoint
 * between a group's last value and the next group's first (np.array_split groups).
 */
export function equalMassEdgesFromRanked(
  picked: Float64Array,
  n: number,
  bins: number,
  massEdges: MassEdges,
): Float64Array {
  const edges = new Float64Array(bins + 1);
  if (massEdges === 'quantile') {
    for (let j = 0; j <= bins; j++) {
      const position = (j / bins) * (n - 1);
      const t = position - Math.floor(position);
      const a = picked[2 * j];
      const b = picked[2 * j + 1];
      edges[j] = t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
    }
  } else {
    for (let j = 0; j < bins - 1; j++) edges[j + 1] = (picked[2 * j] + picked[2 * j + 1]) / 2;
  }
  edges[bins] = 1;
  return edges;
}

/** Edges of equal-mass bins; only the order statistics they use are computed, not a full sort. */
export function equalMassEdges(values: Float64Array, bins: number, massEdges: MassEdges): Float64Array {
  return equalMassEdgesFromRanked(
    orderStatistics(values, equalMassRanks(values.length, bins, massEdges)),
    values.length,
    bins,
    massEdges,
  );
}

export function binCountOf(spec: BinningSpec): number {
  return spec.bins + (spec.edgeRule === 'one-in-extra-bin' ? 1 : 0);
}

/** Refuses a spec that cannot bin `sampleCount` values. */
export function checkBinningSpec(spec: BinningSpec, sampleCount: number): void {
  if (!Number.isInteger(spec.bins) || spec.bins < 1)
    throw new KnobError('INVALID_INPUT', `bin count must be a positive integer, got ${spec.bins}`);
  if (spec.scheme === 'equal-mass' && sampleCount < spec.bins) {
    throw new KnobError(
      'INVALID_INPUT',
      `${spec.bins} equal-mass bins need at least ${spec.bins} samples, got ${sampleCount}`,
    );
  }
}

/** Validates `spec` against the values and returns the table that locates them in its bins. */
export function binTableFor(values: Float64Array, spec: BinningSpec): BinTable {
  checkBinningSpec(spec, values.length);
  const edges =
    spec.scheme === 'equal-width' ? equalWidthEdges(spec.bins) : equalMassEdges(values, spec.bins, spec.massEdges);
  return new BinTable(edges, spec.edgeRule, values.length);
}

/** Assigns every value (in [0, 1]) to a bin. Equal-mass edges come from order statistics, not a sort. */
export function assignBins(values: Float64Array, spec: BinningSpec): Bins {
  const table = binTableFor(values, spec);
  const binOf = new Int32Array(values.length);
  table.locateRangeInto(values, 0, values.length, binOf);
  return { binOf, binCount: binCountOf(spec), edges: table.edges };
}
