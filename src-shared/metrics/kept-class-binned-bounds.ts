import { locateBin } from './bin-location';
import { binCountOf, binningIdentity, equalMassEdges, equalWidthEdges, type BinningSpec } from './binning';
import { sharpness } from './calibration-error';
import { binnedStatistics } from './column-statistics';
import type { KeptClassFrameBounds } from './kept-class-bounds';
import type { TopLabelScores } from './scores';
import { debiasedL2Bound, type DebiasedL2Kind } from './kept-class-debiased-bounds';

/**
 * The stated bounds of the kept-class binned metrics under B equal-width or equal-mass bins with any
 * edge rule (kept-class-bounds.ts states the rest). n labelled frames; a settled frame's full
 * confidence lies in [c_i - down_i, c_i + up_i], width d_i, and its correctness a_i is the
 * estimate's; an unsettled frame (its top-1 not settled) may be anywhere in [0, 1], right or wrong.
 * In bin b, s_b settled frames stay in it (in both traces) and m_b others may be in it in either
 * trace (a settled frame that may be in another bin in one of them, or any unsettled frame).
 * Equal-width edges are fixed: a frame stays when its range lies in one bin. Equal-mass edges move
 * with the values (binning.ts: each inner edge is a midpoint, or numpy's linear quantile, of two
 * order statistics, nondecreasing in both), and the k-th order statistic of values each in
 * [lo_i, hi_i] lies between the k-th of the lo's and the k-th of the hi's; so every edge of both
 * traces lies between the edges of the lo's and those of the hi's (widened by EDGE_ROUNDING for
 * the rounding of the interpolation), and a frame stays when the bin of lo_i under the highest
 * edges equals the bin of hi_i under the lowest (a bin index grows with the value and falls as the
 * edges rise, under every edge rule).
 * - ECE (L1) = (1/n) sum_b |sum_{i in b} (c_i - a_i)|: a settled frame that stays in its bin moves
 *   its bin's sum by at most d_i; one that may change bin, or an unsettled one, moves two bins' sums
 *   by at most 1 each: (sum_{settled, same bin} d_i + 2 #others) / n. The weighted top-label ECE per
 *   predicted class (Gupta & Ramdas 2021) is the same sum over (class, bin) cells: the same bound.
 * - A bin's gap, mean_{i in b} (c_i - a_i): adding t values in [-1, 1] to a mean of s_b moves it by
 *   at most 2 t / (s_b + t) <= 2 m_b / (s_b + m_b), once for each trace, and the settled frames'
 *   own mean moves by at most sum d_i / s_b; so beta_b = min(1, sum d_i / s_b + 4 m_b / (s_b + m_b)).
 * - MCE = max over non-empty bins of |gap_b|: max_b beta_b, or 1 where a bin with no settled frame
 *   may be non-empty in one trace only.
 * - ACE (netcal) = the unweighted mean of |gap_b| over non-empty bins: where every bin that may be
 *   non-empty holds a settled frame, the same bins are non-empty in both traces and it moves by the
 *   mean of beta_b over them; otherwise 1.
 * - RMSCE (L2 plug-in) = ||v||, v_b = sqrt(N_b / n) |gap_b| with N_b in [s_b, s_b + m_b]: by the
 *   triangle inequality it moves by at most sqrt(sum_b delta_b^2), delta_b = sqrt((s_b + m_b)/n)
 *   - sqrt(s_b/n) + sqrt((s_b + m_b)/n) beta_b (the weight's move times a gap of at most 1, plus the
 *   weight times the gap's move), or sqrt(m_b/n) for a bin with no settled frame.
 * - sharpness = sum_b (N_b/n) acc_b^2 = ||w||^2, w_b = (correct in b) / sqrt(n N_b): with A_b of the
 *   s_b settled frames right and t <= m_b others added, t_c <= t of them right, w_b lies between
 *   A_b / sqrt(n (s_b + m_b)) and (A_b + m_b) / sqrt(n (s_b + m_b)) ((A + t)/sqrt(s + t) increases
 *   with t as A <= s), a range of D_b = m_b / sqrt(n (s_b + m_b)); so ||w|| moves by at most
 *   D = sqrt(sum D_b^2) and ||w||^2 by at most D (2 ||w_est|| + D).
 * - refinement = sum_b (N_b/n) acc_b (1 - acc_b) = accuracy - sharpness: the accuracy's bound
 *   (unsettled frames / n) plus the sharpness's.
 * - the top-label ECE per predicted class, weighted by n_l / n (Gupta & Ramdas 2021) and the
 *   unweighted mean over predicted classes (MAPIE): under equal-width bins the weighted one is the
 *   ECE's sum over finer (class, bin) cells, the same bound. With every top-1 settled each frame
 *   keeps its class, and class l's ECE moves by at most its own frames' share of the ECE's sum
 *   above over n_l, its bins (equal-mass: of its own frames' values, each class of at least B
 *   frames, as the metric takes them) bounded as above; with any unsettled frame the classes
 *   themselves may change: 1 (but for the weighted one under equal-width bins).
 * - the debiased L2-CEs (Kumar et al. 2019; Sun et al. 2024's U-statistic): kept-class-debiased-bounds.ts.
 * Every bound is capped at 1, each metric's range.
 */
export type BinnedKind =
  | 'ECE'
  | 'MCE'
  | 'RMSCE'
  | 'ACE'
  | 'sharpness'
  | 'refinement'
  | 'ECE per class, weighted'
  | 'ECE per class, unweighted'
  | DebiasedL2Kind;

/**
 * Absolute slack on each equal-mass edge: a midpoint or an interpolation of two order statistics in
 * [0, 1] is off its exact value by a few units in the last place of 1 (2.2e-16), in either trace.
 */
const EDGE_ROUNDING = 1e-15;

/**
 * Added to every binned bound: a bound can be met exactly (a sharpness of 9/49 with one unsettled
 * frame), and each trace's metric is rounded in its own order, a few units in the last place.
 */
const METRIC_ROUNDING = 1e-13;

/**
 * The bounds above for `kind` under any binning; each binning's pass over the frames (a day is
 * millions) is made once and kept, however many of its metrics ask. An equal-mass binning of fewer
 * frames than bins has no metric to bound: NaN.
 */
export function binnedBounds(
  top: TopLabelScores,
  bounds: KeptClassFrameBounds,
  unsettled: number,
): (kind: BinnedKind, spec: BinningSpec) => number {
  const passes = new Map<string, { occupancy: Occupancy; estimateSharpness: number; spec: BinningSpec }>();
  const n = top.confidence.length;
  const accuracyBound = unsettled / n;
  // the per-class ECEs under equal-mass bins: one pass per binning for both of them
  const perClass = new Map<string, PerClassSums>();
  return (kind, spec) => {
    if (spec.scheme === 'equal-mass' && n < spec.bins) return Number.NaN;
    const key = binningIdentity(spec);
    if ((kind === 'ECE per class, weighted' || kind === 'ECE per class, unweighted') && spec.scheme === 'equal-mass') {
      if (unsettled > 0) return 1;
      let sums = perClass.get(key);
      if (sums === undefined) perClass.set(key, (sums = perClassEqualMass(top, bounds, spec)));
      return perClassBound(kind, sums, n);
    }
    let pass = passes.get(key);
    if (pass === undefined) {
      pass = {
        occupancy: binOccupancy(top, bounds, unsettled, spec),
        estimateSharpness: sharpness(binnedStatistics(top.confidence, top.correct, spec)),
        spec,
      };
      passes.set(key, pass);
    }
    if (kind === 'debiased L2-CE' || kind === 'debiased L2-CE (U-statistic)')
      return debiasedL2Bound(kind, top, spec, {
        ...pass.occupancy,
        weightedGapMoves: pass.occupancy.settled.map((stay, b) =>
          weightedGapMove(n, stay, pass!.occupancy.settledWidth[b]!, pass!.occupancy.others[b]!),
        ),
      });
    return binnedBound(kind, n, pass.occupancy, pass.estimateSharpness, accuracyBound);
  };
}

function binnedBound(
  kind: Exclude<BinnedKind, DebiasedL2Kind>,
  n: number,
  occupancy: Occupancy,
  estimateSharpness: number,
  accuracyBound: number,
): number {
  const { binCount, settled, settledWidth, others } = occupancy;
  let bound = 0;
  switch (kind) {
    case 'ECE':
    case 'ECE per class, weighted':
      bound = occupancy.eceSum / n;
      break;
    case 'ECE per class, unweighted':
      if (accuracyBound > 0) return 1;
      bound = perClassBound(kind, occupancy, n);
      break;
    case 'MCE':
    case 'ACE': {
      let nonEmpty = 0;
      for (let b = 0; b < binCount; b++) {
        const beta = gapBound(settled[b]!, settledWidth[b]!, others[b]!);
        if (beta === null) {
          if (others[b]! > 0) return 1;
          continue;
        }
        nonEmpty++;
        bound = kind === 'MCE' ? Math.max(bound, beta) : bound + beta;
      }
      if (kind === 'ACE' && nonEmpty > 0) bound /= nonEmpty;
      break;
    }
    case 'RMSCE': {
      let squares = 0;
      for (let b = 0; b < binCount; b++) {
        const delta = weightedGapMove(n, settled[b]!, settledWidth[b]!, others[b]!);
        squares += delta * delta;
      }
      bound = Math.sqrt(squares);
      break;
    }
    case 'sharpness':
    case 'refinement': {
      let squares = 0;
      for (let b = 0; b < binCount; b++) {
        const s = settled[b]!;
        const m = others[b]!;
        if (s + m > 0) squares += (m * m) / (n * (s + m));
      }
      const spread = Math.sqrt(squares);
      bound = spread * (2 * Math.sqrt(estimateSharpness) + spread);
      if (kind === 'refinement') bound += accuracyBound;
      break;
    }
  }
  return Math.min(1, bound + METRIC_ROUNDING);
}

interface Occupancy {
  binCount: number;
  settled: Float64Array;
  settledWidth: Float64Array;
  others: Float64Array;
  eceSum: number;
  /** Per predicted class (by index): its settled frames, and their share of eceSum. */
  classFrames: Float64Array;
  classEceSum: Float64Array;
}

/** Each class's frames and share of the ECE's sum (Occupancy's), as the per-class ECEs read them. */
interface PerClassSums {
  classFrames: Float64Array;
  classEceSum: Float64Array;
}

/** The per-class ECE's bound from each class's share: sum over n (weighted), or the mean of share / n_l. */
function perClassBound(
  kind: 'ECE per class, weighted' | 'ECE per class, unweighted',
  sums: PerClassSums,
  n: number,
): number {
  const { classFrames, classEceSum } = sums;
  let bound = 0;
  let classes = 0;
  for (let l = 0; l < classFrames.length; l++) {
    if (classFrames[l] === 0) continue;
    classes++;
    bound += kind === 'ECE per class, weighted' ? classEceSum[l]! / n : classEceSum[l]! / classFrames[l]!;
  }
  if (kind === 'ECE per class, unweighted' && classes > 0) bound /= classes;
  return Math.min(1, bound + METRIC_ROUNDING);
}

/**
 * Per predicted class of at least B frames (every top-1 settled): its frames and its ECE sum under
 * equal-mass bins of its own values, each class's occupancy as above; smaller classes count none.
 */
function perClassEqualMass(top: TopLabelScores, bounds: KeptClassFrameBounds, spec: BinningSpec): PerClassSums {
  const n = top.confidence.length;
  let classes = 0;
  for (let i = 0; i < n; i++) if (top.predicted[i]! >= classes) classes = top.predicted[i]! + 1;
  // frames grouped by class (a counting sort), then each group's occupancy on copies of its columns
  const starts = new Int32Array(classes + 1);
  for (let i = 0; i < n; i++) starts[top.predicted[i]! + 1]++;
  for (let l = 0; l < classes; l++) starts[l + 1] += starts[l]!;
  const order = new Int32Array(n);
  const fill = starts.slice(0, classes);
  for (let i = 0; i < n; i++) order[fill[top.predicted[i]!]!++] = i;
  const classFrames = new Float64Array(classes);
  const classEceSum = new Float64Array(classes);
  for (let l = 0; l < classes; l++) {
    const group = order.subarray(starts[l]!, starts[l + 1]!);
    if (group.length < spec.bins) continue;
    // gathered by plain loops: TypedArray.from with a mapping function is many times slower in V8
    const gather = <T extends Float64Array | Uint8Array | Int32Array>(column: T, into: T): T => {
      for (let j = 0; j < group.length; j++) into[j] = column[group[j]!]!;
      return into;
    };
    const floats = (column: Float64Array) => gather(column, new Float64Array(group.length));
    const bytes = (column: Uint8Array) => gather(column, new Uint8Array(group.length));
    const groupTop = {
      confidence: floats(top.confidence),
      correct: bytes(top.correct),
      predicted: gather(top.predicted, new Int32Array(group.length)),
    };
    const groupBounds = {
      confidenceUp: floats(bounds.confidenceUp),
      confidenceDown: floats(bounds.confidenceDown),
      nll: floats(bounds.nll),
      brier: floats(bounds.brier),
      uncertainTop1: bytes(bounds.uncertainTop1),
    };
    classFrames[l] = group.length;
    classEceSum[l] = binOccupancy(groupTop, groupBounds, 0, spec).eceSum;
  }
  return { classFrames, classEceSum };
}

/**
 * How far v_b = sqrt(N_b / n) |gap_b| may move (the RMSCE's delta_b above): the weight's move
 * times a gap of at most 1, plus the weight times the gap's move; sqrt(m_b / n) with no settled frame.
 */
function weightedGapMove(n: number, settled: number, settledWidth: number, others: number): number {
  const beta = gapBound(settled, settledWidth, others);
  const most = Math.sqrt((settled + others) / n);
  return beta === null ? most : most - Math.sqrt(settled / n) + most * beta;
}

/** beta_b above, or null for a bin with no settled frame. */
function gapBound(settled: number, settledWidth: number, others: number): number | null {
  return settled === 0 ? null : Math.min(1, settledWidth / settled + (4 * others) / (settled + others));
}

/**
 * Per bin: how many settled frames stay in it, the sum of their ranges' widths, and how many other
 * frames may be in it in either trace; with the ECE's sum over frames (d_i or 2 each).
 */
function binOccupancy(
  top: TopLabelScores,
  bounds: KeptClassFrameBounds,
  unsettled: number,
  spec: BinningSpec,
): Occupancy {
  const n = top.confidence.length;
  // each frame's range of full confidence, clamped to [0, 1] (an unsettled frame's is all of it)
  const lo = new Float64Array(n);
  const hi = new Float64Array(n).fill(1);
  for (let i = 0; i < n; i++) {
    if (bounds.uncertainTop1[i] === 1) continue;
    const c = top.confidence[i]!;
    lo[i] = Math.max(0, c - bounds.confidenceDown[i]!);
    hi[i] = Math.min(1, c + bounds.confidenceUp[i]!);
  }
  const { lowest, highest } = edgeRanges(lo, hi, spec);
  const binCount = binCountOf(spec);
  const settled = new Float64Array(binCount);
  const settledWidth = new Float64Array(binCount);
  // crossings[b] - crossings[b - 1]: settled frames whose range starts by bin b, less those ended
  // before it (a difference array, so a range over many bins costs two entries)
  const crossings = new Float64Array(binCount + 1);
  let eceSum = 2 * unsettled;
  let classes = 0;
  for (let i = 0; i < n; i++) if (top.predicted[i]! >= classes) classes = top.predicted[i]! + 1;
  const classFrames = new Float64Array(classes);
  const classEceSum = new Float64Array(classes);
  for (let i = 0; i < n; i++) {
    if (bounds.uncertainTop1[i] === 1) continue;
    const width = bounds.confidenceUp[i]! + bounds.confidenceDown[i]!;
    classFrames[top.predicted[i]!]++;
    const low = locateBin(lo[i]!, highest, spec.edgeRule);
    const high = locateBin(hi[i]!, lowest, spec.edgeRule);
    if (low === high) {
      settled[low]++;
      settledWidth[low] += width;
      eceSum += width;
      classEceSum[top.predicted[i]!] += width;
    } else {
      crossings[low]++;
      crossings[high + 1]--;
      eceSum += 2;
      classEceSum[top.predicted[i]!] += 2;
    }
  }
  const others = new Float64Array(binCount);
  let crossing = 0;
  for (let b = 0; b < binCount; b++) {
    crossing += crossings[b]!;
    others[b] = crossing + unsettled;
  }
  return { binCount, settled, settledWidth, others, eceSum, classFrames, classEceSum };
}

/**
 * The lowest and highest each edge can be in either trace: equal-width edges are fixed; equal-mass
 * edges lie between those of the frames' lower ends and those of their upper ends (see above),
 * widened by EDGE_ROUNDING. The last edge is 1 in every binning (the extra bin's for 1.0).
 */
function edgeRanges(
  lo: Float64Array,
  hi: Float64Array,
  spec: BinningSpec,
): { lowest: Float64Array; highest: Float64Array } {
  if (spec.scheme === 'equal-width') {
    const edges = equalWidthEdges(spec.bins);
    return { lowest: edges, highest: edges };
  }
  const lowest = equalMassEdges(lo, spec.bins, spec.massEdges);
  const highest = equalMassEdges(hi, spec.bins, spec.massEdges);
  for (let j = 0; j < spec.bins; j++) {
    lowest[j]! -= EDGE_ROUNDING;
    highest[j]! += EDGE_ROUNDING;
  }
  return { lowest, highest };
}
