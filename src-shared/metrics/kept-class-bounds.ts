import { locateBin, type EdgeRule } from './bin-location';
import { equalWidthEdges } from './binning';
import type { MetricValue } from './metric-value';
import { aurcBound, aurocBound, eAurcBound } from './kept-class-rank-bounds';
import { NLL_FROM_LOGITS } from './proper-scores';
import type { TopLabelScores } from './scores';

/**
 * How far each frame's figures from kept-class logits may lie from those of the full trace: the
 * full trace's confidence lies in [c - confidenceDown, c + confidenceUp] (down is rounding alone:
 * the full replay sums in another order), its NLL term and its Brier term within +-nll and
 * +-brier of the estimate; `uncertainTop1` marks a frame whose top-1 the kept
 * classes cannot settle (a rest class may lead the fused row, or two kept classes tie as far as the
 * softmax's rounding can tell). An NLL bound is Infinity where the label was not kept.
 */
export interface KeptClassFrameBounds {
  confidenceUp: Float64Array;
  confidenceDown: Float64Array;
  nll: Float64Array;
  brier: Float64Array;
  uncertainTop1: Uint8Array;
}

/**
 * How far a metric computed from kept-class logits (src-shared/trace/kept-class-scores.ts) may lie from the same
 * metric of the full trace, from the frames' bounds; n labelled frames, u of them with an
 * unsettled top-1, c_i the confidence and d_i = up_i + down_i the width of its range:
 * - accuracy(top-1): u / n;
 * - NLL (mean): the mean NLL bound (the full value lies below the estimate but for rounding);
 * - Brier (multiclass): the mean Brier bound;
 * - Brier (top-label) (c - correct)^2: d_i (2 + d_i) a settled frame, 1 an unsettled one, averaged;
 * - ECE(top-label, B equal-width bins, any edge rule, L1) = (1/n) sum_b |sum_{i in b} (c_i - a_i)|:
 *   a settled frame whose [c_i - down_i, c_i + up_i] stays in its bin moves its bin's sum by at most d_i; one
 *   that may change bin, or whose top-1 may change, moves two bins' sums by at most 1 each, so the
 *   bound is (sum_{settled, same bin} d_i + 2 #others) / n; the same holds for the weighted
 *   top-label ECE per predicted class (Gupta & Ramdas 2021), the same sum over (class, bin) cells;
 * - AUROC, AURC and E-AURC: kept-class-rank-bounds.ts.
 * - MCE(top-label, B equal-width bins, any edge rule) = max over non-empty bins of |mean_{i in b} (c_i - a_i)|:
 *   in bin b, S_b settled frames stay in it whatever the full confidence (their range inside b) and
 *   m_b others may be in it in either trace (a settled frame whose range crosses into b, or an
 *   unsettled one, which may be anywhere). Adding t of values in [-1, 1] to a mean of |S_b| moves it by at most
 *   2 t / (|S_b| + t) <= 2 m_b / (|S_b| + m_b), once for each trace, and the settled frames' own
 *   mean moves by at most sum_{S_b} d_i / |S_b|; so a bin's gap moves by at most
 *   beta_b = sum_{S_b} d_i / |S_b| + 4 m_b / (|S_b| + m_b), and the MCE by max_b beta_b, or 1 where
 *   a bin with no settled frame may be non-empty in one trace only.
 * - RMSCE (L2 plug-in) = ||v||, v_b = sqrt(N_b / n) |gap_b| with N_b in [s_b, s_b + m_b]: by the
 *   triangle inequality it moves by at most ||v_full - v_est|| <= sqrt(sum_b delta_b^2), where
 *   delta_b = sqrt((s_b + m_b)/n) - sqrt(s_b/n) + sqrt((s_b + m_b)/n) min(1, beta_b) (the weight's
 *   move times a gap of at most 1, plus the weight times the gap's move), or sqrt(m_b/n) for a bin
 *   with no settled frame.
 * Other metrics (equal-mass bins, SmoothECE, the cumulative tests) have no stated bound here: they are
 * marked as computed from the kept classes, without one.
 */
export interface KeptClassMetricBounds {
  frames: number;
  unsettledFrames: number;
  accuracy: number;
  nll: number;
  brier: number;
  topLabelBrier: number;
  /** The ECE bound under equal-width bins. */
  ece(bins: number, edgeRule: EdgeRule): number;
  /** The MCE bound under equal-width bins. */
  mce(bins: number, edgeRule: EdgeRule): number;
  /** The RMSCE bound under equal-width bins. */
  rmsce(bins: number, edgeRule: EdgeRule): number;
  auroc(): number;
  aurc(): number;
  eAurc(): number;
}

export function keptClassMetricBounds(top: TopLabelScores, bounds: KeptClassFrameBounds): KeptClassMetricBounds {
  const n = top.confidence.length;
  let unsettled = 0;
  let nll = 0;
  let brier = 0;
  let topLabelBrier = 0;
  for (let i = 0; i < n; i++) {
    const up = bounds.confidenceUp[i]! + bounds.confidenceDown[i]!;
    nll += bounds.nll[i]!;
    brier += bounds.brier[i]!;
    if (bounds.uncertainTop1[i] === 1) {
      unsettled++;
      topLabelBrier += 1;
    } else topLabelBrier += up * (2 + up);
  }
  return {
    frames: n,
    unsettledFrames: unsettled,
    accuracy: unsettled / n,
    nll: nll / n,
    brier: brier / n,
    topLabelBrier: Math.min(1, topLabelBrier / n),
    auroc: () => aurocBound(top, bounds, unsettled),
    aurc: () => aurcBound(top, bounds, unsettled),
    eAurc: () => eAurcBound(top, bounds, unsettled),
    mce: (bins, edgeRule) => mceBound(binOccupancy(top, bounds, unsettled, bins, edgeRule)),
    rmsce: (bins, edgeRule) => rmsceBound(binOccupancy(top, bounds, unsettled, bins, edgeRule), n),
    ece(bins, edgeRule) {
      const edges = equalWidthEdges(bins);
      let sum = 0;
      for (let i = 0; i < n; i++) {
        const c = top.confidence[i]!;
        const up = bounds.confidenceUp[i]!;
        const down = bounds.confidenceDown[i]!;
        const moves =
          bounds.uncertainTop1[i] === 1 ||
          locateBin(Math.max(0, c - down), edges, edgeRule) !== locateBin(Math.min(1, c + up), edges, edgeRule);
        sum += moves ? 2 : up + down;
      }
      // an ECE lies in [0, 1]
      return Math.min(1, sum / n);
    },
  };
}

/**
 * Per bin under equal-width bins: how many settled frames stay in it, the sum of their confidence
 * ranges' widths, and how many other frames may be in it in either trace (settled frames whose range
 * crosses into it, and every unsettled frame).
 */
function binOccupancy(
  top: TopLabelScores,
  bounds: KeptClassFrameBounds,
  unsettled: number,
  bins: number,
  edgeRule: EdgeRule,
) {
  const edges = equalWidthEdges(bins);
  const binCount = edgeRule === 'one-in-extra-bin' ? bins + 1 : bins;
  const settled = new Float64Array(binCount);
  const settledWidth = new Float64Array(binCount);
  // crossings[b] - crossings[b - 1]: settled frames whose range starts by bin b, less those ended
  // before it (a difference array, so a range over many bins costs two entries)
  const crossings = new Float64Array(binCount + 1);
  for (let i = 0; i < top.confidence.length; i++) {
    if (bounds.uncertainTop1[i] === 1) continue;
    const c = top.confidence[i]!;
    const down = bounds.confidenceDown[i]!;
    const up = bounds.confidenceUp[i]!;
    const low = locateBin(Math.max(0, c - down), edges, edgeRule);
    const high = locateBin(Math.min(1, c + up), edges, edgeRule);
    if (low === high) {
      settled[low]++;
      settledWidth[low] += up + down;
    } else {
      crossings[low]++;
      crossings[high + 1]--;
    }
  }
  const others = new Float64Array(binCount);
  let crossing = 0;
  for (let b = 0; b < binCount; b++) {
    crossing += crossings[b]!;
    others[b] = crossing + unsettled;
  }
  return { binCount, settled, settledWidth, others };
}

/** How far bin b's |gap| may move (beta_b above), or null when it has no settled frame. */
function gapBound(settled: number, settledWidth: number, others: number): number | null {
  return settled === 0 ? null : Math.min(1, settledWidth / settled + (4 * others) / (settled + others));
}

/** The MCE bound above. */
function mceBound(occupancy: ReturnType<typeof binOccupancy>): number {
  const { binCount, settled, settledWidth, others } = occupancy;
  let worst = 0;
  for (let b = 0; b < binCount; b++) {
    const beta = gapBound(settled[b]!, settledWidth[b]!, others[b]!);
    if (beta === null) {
      if (others[b]! > 0) return 1;
      continue;
    }
    worst = Math.max(worst, beta);
  }
  return worst;
}

/** The RMSCE bound above, for n frames. */
function rmsceBound(occupancy: ReturnType<typeof binOccupancy>, n: number): number {
  const { binCount, settled, settledWidth, others } = occupancy;
  let squares = 0;
  for (let b = 0; b < binCount; b++) {
    const s = settled[b]!;
    const m = others[b]!;
    const beta = gapBound(s, settledWidth[b]!, m);
    const most = Math.sqrt((s + m) / n);
    const delta = beta === null ? most : most - Math.sqrt(s / n) + most * beta;
    squares += delta * delta;
  }
  return Math.min(1, Math.sqrt(squares));
}

const EDGE_RULE_OF_LABEL: ReadonlyArray<[string, EdgeRule]> = [
  ['[lo,hi) last closed', 'left-closed'],
  ['(lo,hi] first closed', 'right-closed'],
  ['[lo,hi) with 1.0 in an extra bin', 'one-in-extra-bin'],
];

/**
 * The kind, bins and edge rule of an equal-width top-label ECE identity (alone or per predicted
 * class weighted by n_l / n: the same sum over finer cells, so the same bound), MCE or RMSCE
 * identity, or null.
 */
function equalWidthBinnedOf(
  identity: string,
): { kind: 'ECE' | 'MCE' | 'RMSCE'; bins: number; edgeRule: EdgeRule } | null {
  const match =
    /^(ECE|MCE|RMSCE)\(top-label(?: per predicted class)?, (\d+) equal-width bins, (.+?), (L1|max|L2 plug-in)(?:, weighted by n_l\/n, Gupta & Ramdas 2021)?\)(?: \[preset [^\]]+\])?$/.exec(
      identity,
    );
  if (match === null) return null;
  const [, kind, bins, label, norm] = match as unknown as [string, 'ECE' | 'MCE' | 'RMSCE', string, string, string];
  // each kind with its own norm, and only the ECE per predicted class
  const normOf = { ECE: 'L1', MCE: 'max', RMSCE: 'L2 plug-in' } as const;
  if (norm !== normOf[kind] || (kind !== 'ECE' && identity.includes('per predicted class'))) return null;
  const rule = EDGE_RULE_OF_LABEL.find(([known]) => known === label);
  return rule === undefined ? null : { kind, bins: Number(bins), edgeRule: rule[1] };
}

/**
 * The metrics with what their kept-class origin means for them, in `approximation`: the bound
 * where one is stated above, "no stated bound" for the rest; the metrics that read every class
 * say the trace did not keep them.
 */
export function withKeptClassBounds(
  metrics: MetricValue[],
  bounds: KeptClassMetricBounds,
  keptClasses: { keep: number; classCount: number },
): MetricValue[] {
  const kept = keptClassesText(keptClasses);
  const within = (bound: number) => `${kept}: the full trace's value is within ${roundedUp(bound)} of it`;
  return metrics.map((m) => {
    if (m.unavailable?.reason === 'every class not computed')
      return {
        ...m,
        unavailable: { reason: 'classes not kept', keep: keptClasses.keep, classCount: keptClasses.classCount },
      };
    if (m.unavailable !== undefined) return m;
    let bound: number | null = null;
    if (m.identity === 'accuracy(top-1)') bound = bounds.accuracy;
    else if (m.identity === NLL_FROM_LOGITS) bound = bounds.nll;
    else if (m.name === 'Brier') bound = bounds.brier;
    else if (m.name === 'Brier (top-label)') bound = bounds.topLabelBrier;
    else if (m.name === 'AUROC') bound = bounds.auroc();
    else if (m.name === 'AURC') bound = bounds.aurc();
    else if (m.name === 'E-AURC') bound = bounds.eAurc();
    else {
      const binned = equalWidthBinnedOf(m.identity);
      if (binned !== null)
        bound = { ECE: bounds.ece, MCE: bounds.mce, RMSCE: bounds.rmsce }[binned.kind](binned.bins, binned.edgeRule);
    }
    return { ...m, approximation: bound === null ? `${kept}: no stated bound for this metric` : within(bound) };
  });
}

/** A bound for text, three significant digits rounded up (rounded to nearest it could understate). */
function roundedUp(bound: number): string {
  if (!(bound > 0) || !Number.isFinite(bound)) return String(bound);
  const step = 10 ** (Math.floor(Math.log10(bound)) - 2);
  return (Math.ceil(bound / step) * step).toPrecision(3);
}

/** "32 of 1000 classes kept a frame". */
export function keptClassesText({ keep, classCount }: { keep: number; classCount: number }): string {
  return `${keep} of ${classCount} classes kept a frame`;
}
