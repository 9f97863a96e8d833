import type { KeptClassFrameBounds } from './kept-class-bounds';
import type { TopLabelScores } from './scores';
import {
  gaussianOnGrid,
  gridCellOf,
  gridCellResidual,
  gridProviderFromSamples,
  linspace,
  forEachReachableBandwidth,
  smoothEceFromGrids,
  smoothEceTerms,
  smoothGridNodes,
  smoothMeshPoints,
  type GridProvider,
} from './smooth-ece';
import { ValuesBoundedCache } from './values-bounded-cache';

/**
 * A stated bound of SmoothECE (smooth-ece.ts, relplot's procedure) of a kept-class trace against
 * its full trace. Each frame's full confidence lies in [lo_i, hi_i] with its correctness the
 * estimate's (a settled frame), or anywhere in [0, 1], right or wrong (U unsettled frames).
 *
 * At a bandwidth sigma, smECE_sigma = N / D with N = sum_k |sum_i r_i phi_i(k)| and
 * D = sum_k sum_i phi_i(k) + P 1e-4, where r_i = f_i - y_i and phi_i = I G s(f_i) >= 0 is what one
 * frame adds to the P mesh points: s splits it onto the M grid nodes (linear in f_i within a cell
 * of width 1 / (M - 1), slope (M - 1)(e_{b+1} - e_b) in cell b), G is the mirrored convolution with
 * the sampled Gaussian and I the interpolation onto the mesh, both linear with non-negative entries.
 * So moving a settled frame within its range moves r_i phi_i in L1 by at most
 * delta_i + |hi_i - lo_i| S, with delta_i = sum_b L_b (M - 1) |[lo_i, hi_i] and cell b|,
 * L_b = ||I G (e_{b+1} - e_b)||_1 and S = max_b ||I G e_b||_1 (|r| <= 1), and phi_i itself by
 * delta_i; an unsettled frame moves N by at most 2 S and D by S. Then smECE_sigma of the full trace
 * lies in [(N - dN) / (D + dD), (N + dN) / (D - dD)]. L_b and S are computed exactly for each
 * sigma (O(M P), M the grid's nodes and P the mesh's points; kept for the next subject), the
 * frames' ranges tallied by cell once per grid, so a bandwidth costs O(M P), not O(n).
 *
 * The bandwidth sigma* is the end of relplot's bisection on "sigma < smECE_sigma": where a
 * bandwidth's range of smECE holds sigma the full trace's search may go either way, so every end it
 * can reach is followed (forEachReachableBandwidth), and the full trace's SmoothECE lies in the union of
 * those ends' ranges, each capped by its sigma (the search keeps an end where smECE_sigma <= sigma).
 * The bound is the farther end of that union from the estimate. N and D are widened by
 * SUM_ROUNDING of D for the rounding of both traces' FFTs and sums.
 *
 * Ranges wide enough to leave many bandwidths undecided would make the search follow hundreds of
 * them: past `workBudgetProducts`, a bandwidth below 1 is taken as either way without being smoothed, its range
 * as [0, 1] (an end's smECE is then capped by its sigma alone), which is still a bound, only a looser
 * one.
 */
export function smoothEceBound(
  top: TopLabelScores,
  bounds: KeptClassFrameBounds,
  /** Grid-node-by-mesh-point products to spend (the tests lower it to reach the fallback). */
  workBudgetProducts = WORK_FOLLOWED,
): number {
  const grids = gridProviderFromSamples(top.confidence, top.correct);
  const estimate = smoothEceFromGrids(grids).value.value;
  const frames = frameRanges(top, bounds);
  const ranges = new Map<number, [number, number]>();
  let work = 0;
  const rangeAt = (sigma: number): [number, number] => {
    let range = ranges.get(sigma);
    if (range === undefined) {
      work += smoothGridNodes(sigma) * smoothMeshPoints(sigma);
      // [0, 1], not [0, sigma]: sigma >= sigma would decide the predicate false and drop the
      // branch where it holds (at sigma = 1 it is false anyway: smECE < 1, the density having 1e-4
      // added)
      range = work <= workBudgetProducts ? smoothEceRangeAt(grids, sigma, frames) : [0, 1];
      ranges.set(sigma, range);
    }
    return range;
  };
  // an end's smECE lies in [0, sigma]: a search on from (start, end) cannot widen a bound that
  // already reaches max(estimate, start - estimate), so it is not followed
  let bound = 0;
  forEachReachableBandwidth(
    (sigma) => {
      const [low, high] = rangeAt(sigma);
      return sigma < low ? true : sigma >= high ? false : 'either';
    },
    (sigma) => {
      const [low, high] = rangeAt(sigma);
      bound = Math.max(bound, estimate - low, Math.min(high, sigma) - estimate);
    },
    (start) => bound < Math.max(estimate, start - estimate),
  );
  return bound;
}

/**
 * The most grid-node-by-mesh-point products (a bandwidth's cost, meshResponse) one bound spends:
 * 400 bandwidths at M = 1001 and P = 200 (sigma >= 0.05), each about a millisecond; a small
 * bandwidth costs up to about (10 / sigma)^2 (sigma = 2^-9: a third of the budget).
 */
const WORK_FOLLOWED = 400 * 1001 * 200;

/** Relative widening of N and D against D (FFT and summation rounding, ~1e-13 at most). */
const SUM_ROUNDING = 1e-10;

/** The frames' ranges, tallied by the cells of each grid asked for. */
interface FrameRanges {
  /** Settled frames' summed range widths. */
  widths: number;
  unsettled: number;
  /** cover[b]: the summed lengths of the settled frames' ranges inside cell b, in cells. */
  coverOf(nodes: number): Float64Array;
}

function frameRanges(top: TopLabelScores, bounds: KeptClassFrameBounds): FrameRanges {
  const n = top.confidence.length;
  const lo = new Float64Array(n);
  const hi = new Float64Array(n);
  let widths = 0;
  let unsettled = 0;
  for (let i = 0; i < n; i++) {
    const c = top.confidence[i]!;
    const [a, b] = [Math.max(0, c - bounds.confidenceDown[i]!), Math.min(1, c + bounds.confidenceUp[i]!)];
    // a range that is not one (NaN ends) counts as an unsettled frame's: anywhere, right or wrong
    if (bounds.uncertainTop1[i] === 1 || !(a <= b)) {
      unsettled++;
      lo[i] = NaN;
      continue;
    }
    lo[i] = a;
    hi[i] = b;
    widths += b - a;
  }
  const covers = new Map<number, Float64Array>();
  return {
    widths,
    unsettled,
    coverOf(nodes) {
      let cover = covers.get(nodes);
      if (cover === undefined) covers.set(nodes, (cover = cellCover(lo, hi, nodes)));
      return cover;
    },
  };
}

/**
 * Each cell's share of the ranges (splitOntoGrid's cells: x (M - 1) truncated, the last cell
 * closed): a range within one cell adds its length there; one across cells its part in each end
 * cell, and 1 to every cell between, through a difference array (O(n + M)).
 */
function cellCover(lo: Float64Array, hi: Float64Array, nodes: number): Float64Array {
  const cells = nodes - 1;
  const cover = new Float64Array(cells);
  const spanned = new Float64Array(cells + 1);
  const cellOf = (x: number) => gridCellOf(x, nodes);
  for (let i = 0; i < lo.length; i++) {
    const a = lo[i]!;
    if (Number.isNaN(a)) continue;
    const b = hi[i]!;
    const [first, last] = [cellOf(a), cellOf(b)];
    if (first === last) {
      cover[first] += (b - a) * cells;
      continue;
    }
    cover[first] += first + 1 - a * cells;
    cover[last] += b * cells - last;
    spanned[first + 1]! += 1;
    spanned[last]! -= 1;
  }
  let open = 0;
  for (let c = 0; c < cells; c++) {
    open += spanned[c]!;
    cover[c] += open;
  }
  return cover;
}

/** The range of the full trace's smECE at one bandwidth, within [0, 1]. */
function smoothEceRangeAt(grids: GridProvider, sigma: number, frames: FrameRanges): [number, number] {
  const { numerator, denominator } = smoothEceTerms(grids, sigma);
  const { steps, mostMass } = meshResponseFor(sigma);
  const cover = frames.coverOf(steps.length + 1);
  let moved = 0;
  for (let c = 0; c < steps.length; c++) moved += steps[c]! * cover[c]!;
  const slack = SUM_ROUNDING * denominator;
  const numeratorMove = moved + (frames.widths + 2 * frames.unsettled) * mostMass + slack;
  const denominatorMove = moved + frames.unsettled * mostMass + slack;
  const low = Math.max(0, numerator - numeratorMove) / (denominator + denominatorMove);
  const high = denominator - denominatorMove > 0 ? (numerator + numeratorMove) / (denominator - denominatorMove) : 1;
  return [low, Math.min(1, high)];
}

/**
 * What a unit of mass at each grid node adds to the mesh, through smoothCurve's steps: `steps`,
 * L_b = ||I G (e_{b+1} - e_b)||_1 per cell, and `mostMass`, max_b ||I G e_b||_1. The columns
 * G e_b follow ReflectedGaussianSmoother's layout: node b sits at M - 1 + b of the mirrored series,
 * and at M - 1 - b (b >= 1) and 3M - 3 - b (b <= M - 2) mirrored; output j reads series entry p
 * with weight kernel[M - 1 - (p - floor(M/2) - j)] where that index is in [0, M - 1]. Only the
 * nodes the mesh reads are evaluated.
 */
function meshResponse(sigma: number): MeshResponse {
  const nodes = smoothGridNodes(sigma);
  const points = smoothMeshPoints(sigma);
  const kernel = gaussianOnGrid(nodes, sigma);
  const start = nodes >> 1;
  // node j of column b reads kernel[start + j - b], kernel[start + j + b] (mirrored, b >= 1) and
  // kernel[start + j + b - 2M + 2] (mirrored, b <= M - 2): padded with zeros to take any of them
  const pad = 2 * nodes;
  const padded = new Float64Array(nodes + 2 * pad);
  padded.set(kernel, pad);
  const mesh = linspace(points);
  const cellOfPoint = new Int32Array(points);
  const weightOfPoint = new Float64Array(points);
  for (let k = 0; k < points; k++) {
    cellOfPoint[k] = gridCellOf(mesh[k]!, nodes);
    weightOfPoint[k] = gridCellResidual(mesh[k]!, cellOfPoint[k]!, nodes);
  }
  let previous = new Float64Array(points);
  let current = new Float64Array(points);
  const steps = new Float64Array(nodes - 1);
  let mostMass = 0;
  for (let b = 0; b < nodes; b++) {
    const direct = pad + start - b;
    const left = b >= 1 ? pad + start + b : -1;
    const right = b <= nodes - 2 ? pad + start + b - 2 * nodes + 2 : -1;
    let mass = 0;
    let step = 0;
    for (let k = 0; k < points; k++) {
      const j = cellOfPoint[k]!;
      const r = weightOfPoint[k]!;
      let at = padded[direct + j]!;
      let next = padded[direct + j + 1]!;
      if (left >= 0) {
        at += padded[left + j]!;
        next += padded[left + j + 1]!;
      }
      if (right >= 0) {
        at += padded[right + j]!;
        next += padded[right + j + 1]!;
      }
      const value = at * (1 - r) + next * r;
      current[k] = value;
      mass += value;
      step += Math.abs(value - previous[k]!);
    }
    if (mass > mostMass) mostMass = mass;
    if (b > 0) steps[b - 1] = step;
    [previous, current] = [current, previous];
  }
  return { steps, mostMass };
}

interface MeshResponse {
  steps: Float64Array;
  mostMass: number;
}

/**
 * Mesh responses kept by bandwidth (they depend on it alone: the three subjects of a trace, and
 * the next trace, visit the same dyadic sigmas), up to 4 Mi values, the oldest going first.
 */
const responses = new ValuesBoundedCache<number, MeshResponse>(4 * 1024 * 1024, (response) => response.steps.length);

function meshResponseFor(sigma: number): MeshResponse {
  return responses.get(sigma, () => meshResponse(sigma));
}
