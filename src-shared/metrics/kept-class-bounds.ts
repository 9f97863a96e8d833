import { formatBoundUp } from './metric-format';
import type { EdgeRule } from './bin-location';
import type { BinningSpec, MassEdges } from './binning';
import { binnedBounds, type BinnedKind } from './kept-class-binned-bounds';
import type { MetricValue } from './metric-value';
import { aurcBound, aurocBound, eAurcBound } from './kept-class-rank-bounds';
import { smoothEceBound } from './kept-class-smooth-ece-bound';
import { calibrationTestBounds, type TestBounds } from './kept-class-test-bounds';
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
 * - ECE, MCE, RMSCE, ACE, sharpness, refinement, the top-label ECE per predicted class (weighted
 *   and MAPIE's unweighted mean) and the debiased L2-CEs (Kumar; Sun's U-statistic) under
 *   equal-width or equal-mass bins, any edge rule: kept-class-binned-bounds.ts and
 *   kept-class-debiased-bounds.ts;
 * - AUROC, AURC and E-AURC: kept-class-rank-bounds.ts;
 * - the KS and Kuiper statistics of cumulative differences, Spiegelhalter's Z and their P-values:
 *   kept-class-test-bounds.ts;
 * - SmoothECE, its bandwidth's search followed wherever the full trace's may go:
 *   kept-class-smooth-ece-bound.ts.
 * TCE (its PAVA bins and a test per prediction) has no stated bound here: it is marked as computed
 * from the kept classes, without one.
 */
export interface KeptClassMetricBounds {
  frames: number;
  unsettledFrames: number;
  accuracy: number;
  nll: number;
  brier: number;
  topLabelBrier: number;
  /** A binned metric's bound under a binning (kept-class-binned-bounds.ts). */
  binned(kind: BinnedKind, spec: BinningSpec): number;
  auroc(): number;
  aurc(): number;
  eAurc(): number;
  /** The calibration tests' bounds (null: the estimate has no test, every confidence 0 or 1). */
  tests(): TestBounds | null;
  smoothEce(): number;
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
  // the AURC's bound sorts every frame's range: once, for E-AURC's too
  let aurc: number | undefined;
  let tests: TestBounds | null | undefined;
  let smoothEce: number | undefined;
  return {
    frames: n,
    unsettledFrames: unsettled,
    accuracy: unsettled / n,
    nll: nll / n,
    brier: brier / n,
    topLabelBrier: Math.min(1, topLabelBrier / n),
    auroc: () => aurocBound(top, bounds, unsettled),
    aurc: () => (aurc ??= aurcBound(top, bounds, unsettled)),
    eAurc: () => eAurcBound(top, bounds, unsettled, (aurc ??= aurcBound(top, bounds, unsettled))),
    binned: binnedBounds(top, bounds, unsettled),
    tests: () => (tests === undefined ? (tests = calibrationTestBounds(top, bounds)) : tests),
    smoothEce: () => (smoothEce ??= smoothEceBound(top, bounds)),
  };
}

const EDGE_RULE_OF_LABEL: ReadonlyArray<[string, EdgeRule]> = [
  ['[lo,hi) last closed', 'left-closed'],
  ['(lo,hi] first closed', 'right-closed'],
  ['[lo,hi) with 1.0 in an extra bin', 'one-in-extra-bin'],
];

/** Each bounded kind by its identity's first word and norm, and whether it is per predicted class. */
const BINNED_NORMS: ReadonlyArray<
  [kind: BinnedKind, word: string, norm: string | RegExp, scope: 'top-label' | 'per predicted class']
> = [
  ['ECE', 'ECE', 'L1', 'top-label'],
  ['ECE per class, weighted', 'ECE', 'L1, weighted by n_l/n, Gupta & Ramdas 2021', 'per predicted class'],
  ['ECE per class, unweighted', 'ECE', /^L1, unweighted mean over \d+ classes, MAPIE$/, 'per predicted class'],
  ['MCE', 'MCE', 'max', 'top-label'],
  ['RMSCE', 'RMSCE', 'L2 plug-in', 'top-label'],
  ['debiased L2-CE', 'CE', 'L2 debiased, Kumar et al. 2019', 'top-label'],
  ['debiased L2-CE (U-statistic)', 'CE', 'L2 debiased U-statistic, Sun et al. 2024', 'top-label'],
  ['ACE', 'ACE', 'unweighted mean over non-empty bins, netcal / Neumann et al. 2018', 'top-label'],
  ['sharpness', 'sharpness', 'sum (n_b/n) acc_b^2', 'top-label'],
  ['refinement', 'refinement', 'sum (n_b/n) acc_b (1 - acc_b)', 'top-label'],
];

/** The calibration tests' metric names (cumulative-tests.ts) and their bounds' keys. */
const TEST_OF_NAME = new Map<string, keyof TestBounds>([
  ['KS (scaled)', 'ks'],
  ['KS P-value', 'ksPValue'],
  ['Kuiper (scaled)', 'kuiper'],
  ['Kuiper P-value', 'kuiperPValue'],
  ['Spiegelhalter Z', 'spiegelhalterZ'],
  ['Spiegelhalter P-value', 'spiegelhalterPValue'],
]);

/** Why a metric has no stated bound, where the reason is known. */
const NO_BOUND_BECAUSE = new Map<string, string>([
  [
    'TCE',
    "its PAVA bins follow the frames' order by confidence, which frames whose ranges overlap may change, and each frame's binomial test is not monotone in its confidence",
  ],
]);

/** The kind and binning of a binned identity (binningIdentity's text) with a stated bound, or null. */
function binnedOf(identity: string): { kind: BinnedKind; spec: BinningSpec } | null {
  const match =
    /^(\w+)\(top-label( per predicted class)?, (\d+) (equal-width|equal-mass \((midpoint|quantile) edges\)) bins, (\[lo,hi\) last closed|\(lo,hi\] first closed|\[lo,hi\) with 1\.0 in an extra bin), (.+)\)(?: \[preset [^\]]+\])?$/.exec(
      identity,
    );
  if (match === null) return null;
  const [, word, perClass, binsText, scheme, massEdges, label, norm] = match;
  const known = BINNED_NORMS.find(
    ([, w, n, scope]) =>
      w === word &&
      (typeof n === 'string' ? n === norm : n.test(norm!)) &&
      (scope === 'per predicted class') === (perClass !== undefined),
  );
  const rule = EDGE_RULE_OF_LABEL.find(([l]) => l === label);
  if (known === undefined || rule === undefined) return null;
  const bins = Number(binsText);
  const edgeRule = rule[1];
  return {
    kind: known[0],
    spec:
      scheme === 'equal-width'
        ? { scheme: 'equal-width', bins, edgeRule }
        : { scheme: 'equal-mass', bins, massEdges: massEdges as MassEdges, edgeRule },
  };
}

/**
 * The metrics with what their kept-class origin means for them, in `approximation`: the bound
 * where one is stated above, "no stated bound" for the rest, with the reason where NO_BOUND_BECAUSE
 * knows it; the metrics that read every class say the trace did not keep them.
 */
export function withKeptClassBounds(
  metrics: MetricValue[],
  bounds: KeptClassMetricBounds,
  keptClasses: { keep: number; classCount: number },
): MetricValue[] {
  const kept = keptClassesText(keptClasses);
  const within = (bound: number) => `${kept}: the full trace's value is within ${formatBoundUp(bound)} of it`;
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
    // top-label SmoothECE: a kept trace has at least 3 classes, so no preset scores it on a
    // binary task's positive-class pairs, which this bound is not of
    else if (m.name === 'SmoothECE') bound = bounds.smoothEce();
    else if (TEST_OF_NAME.has(m.name)) bound = bounds.tests()?.[TEST_OF_NAME.get(m.name)!] ?? null;
    else {
      const binned = binnedOf(m.identity);
      if (binned !== null) bound = bounds.binned(binned.kind, binned.spec);
    }
    if (bound !== null && Number.isFinite(bound)) return { ...m, approximation: within(bound), bound };
    // a frame whose range is unbounded (logits far apart enough that its rest's terms overflow)
    const why = bound !== null ? 'the frames allow no finite bound for it here' : NO_BOUND_BECAUSE.get(m.name);
    return { ...m, approximation: `${kept}: no stated bound for this metric${why === undefined ? '' : ` (${why})`}` };
  });
}

/** "32 of 1000 classes kept a frame". */
export function keptClassesText({ keep, classCount }: { keep: number; classCount: number }): string {
  return `${keep} of ${classCount} classes kept a frame`;
}
